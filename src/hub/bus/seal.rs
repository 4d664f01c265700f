//! Sealing of everything replicas say to each other: whoever can reach NATS but lacks the key
//! can neither read a message (calls and their arguments, answers, events, shared state) nor
//! make one a replica takes (acting as an agent, injecting an event). Each message is sealed
//! with AES-256-GCM under a key derived (HKDF-SHA256, a label of its own) from
//! `MCP_BRIDGE_BUS_KEY`, or else `MCP_BRIDGE_SECRETS_KEY` which every replica shares anyway, and
//! a random nonce; the additional data binds the protocol version and the subject, so a sealed
//! message cannot be moved to another subject (a request for one replica replayed on another's).
//! Replays on the same subject are caught by the sealed sent-at time and id (see [`Seen`]).
//!
//! Wire format: `MB`, the protocol version (one byte), the nonce (12 bytes), then the
//! ciphertext and its tag.

use std::collections::{BTreeSet, HashSet};

use ring::aead::{AES_256_GCM, Aad, LessSafeKey, NONCE_LEN, Nonce, UnboundKey};
use ring::hkdf;
use ring::rand::{SecureRandom, SystemRandom};

const MAGIC: &[u8; 2] = b"MB";
const SALT: &[u8] = b"mcp-bridge replica bus";
const LABEL: &[u8] = b"mcp-bridge bus seal v1";

/// The key replicas seal their messages with.
pub struct BusKey {
    key: LessSafeKey,
    random: SystemRandom,
}

impl std::fmt::Debug for BusKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("BusKey(AES-256-GCM, redacted)")
    }
}

/// A key length for HKDF's output.
struct KeyLen;

impl hkdf::KeyType for KeyLen {
    fn len(&self) -> usize {
        32
    }
}

impl BusKey {
    /// The bus key derived from a 256-bit configured key (never the configured key itself, so
    /// a bus message and a value sealed at rest never share a key).
    pub fn derive(master: &[u8; 32]) -> Self {
        let prk = hkdf::Salt::new(hkdf::HKDF_SHA256, SALT).extract(master);
        let mut bytes = [0u8; 32];
        prk.expand(&[LABEL], KeyLen)
            .and_then(|okm| okm.fill(&mut bytes))
            .expect("32 bytes are a valid HKDF-SHA256 output");
        let key = UnboundKey::new(&AES_256_GCM, &bytes).expect("a 256-bit key is an AES-256 key");
        Self {
            key: LessSafeKey::new(key),
            random: SystemRandom::new(),
        }
    }

    /// `plain` sealed for `subject` in protocol version `version`.
    pub fn seal(&self, version: u8, subject: &str, plain: &[u8]) -> Vec<u8> {
        let mut nonce = [0u8; NONCE_LEN];
        self.random
            .fill(&mut nonce)
            .expect("the system's random source works");
        let mut sealed = plain.to_vec();
        self.key
            .seal_in_place_append_tag(
                Nonce::assume_unique_for_key(nonce),
                Aad::from(aad(version, subject)),
                &mut sealed,
            )
            .expect("AES-GCM seals any message that fits in memory");
        let mut out = Vec::with_capacity(3 + NONCE_LEN + sealed.len());
        out.extend_from_slice(MAGIC);
        out.push(version);
        out.extend_from_slice(&nonce);
        out.extend_from_slice(&sealed);
        out
    }

    /// What was sealed for `subject`, with the version it says; `None` when it was not sealed
    /// with this key for this subject (or was altered).
    pub fn open(&self, subject: &str, sealed: &[u8]) -> Option<(u8, Vec<u8>)> {
        let rest = sealed.strip_prefix(MAGIC)?;
        let (&version, rest) = rest.split_first()?;
        if rest.len() < NONCE_LEN {
            return None;
        }
        let (nonce, ciphertext) = rest.split_at(NONCE_LEN);
        let nonce = Nonce::try_assume_unique_for_key(nonce).ok()?;
        let mut ciphertext = ciphertext.to_vec();
        let plain = self
            .key
            .open_in_place(nonce, Aad::from(aad(version, subject)), &mut ciphertext)
            .ok()?;
        Some((version, plain.to_vec()))
    }
}

fn aad(version: u8, subject: &str) -> Vec<u8> {
    let mut aad = Vec::with_capacity(SALT.len() + 2 + subject.len());
    aad.extend_from_slice(SALT);
    aad.push(0);
    aad.push(version);
    aad.extend_from_slice(subject.as_bytes());
    aad
}

/// Why a sealed message's time or id makes it unfit to take.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Unfit {
    /// Sent later than now plus the skew allowed between clocks.
    Future,
    /// Sent before what is still taken (its window passed, or before the floor).
    Old,
    /// Its id was taken before.
    Replayed,
}

/// The ids of messages taken lately, to refuse one seen again. A message is taken only when
/// its sealed time `at` is at most `skew` ahead of now, at most `max_age` behind it, and not
/// before the floor; its id is kept until `at + max_age`, when the time check refuses it
/// anyway. So what is kept is bounded by time (a sender's clock ahead gains at most `skew`)
/// and by `cap`: past it the oldest id is forgotten and the floor raised to its time, so no
/// forgotten id is ever taken again.
pub struct Seen {
    max_age: u64,
    skew: u64,
    cap: usize,
    /// Nothing sent before it is taken (ms since the epoch).
    floor: u64,
    ids: HashSet<String>,
    /// By sent-at time (and so by expiry: `at + max_age`).
    order: BTreeSet<(u64, String)>,
}

impl Seen {
    /// Ids of messages taken up to `max_age` after they were sent, `skew` ahead at most, `cap`
    /// ids at most (all in milliseconds but the cap).
    pub fn new(max_age: u64, skew: u64, cap: usize) -> Self {
        Self {
            max_age,
            skew,
            cap: cap.max(1),
            floor: 0,
            ids: HashSet::new(),
            order: BTreeSet::new(),
        }
    }

    /// From now on, nothing sent before `at` is taken.
    pub fn raise_floor(&mut self, at: u64) {
        self.floor = self.floor.max(at);
    }

    /// Takes message `id` sent `at`, at `now`: whether it is fit, and then it is known.
    pub fn take(&mut self, id: &str, at: u64, now: u64) -> Result<(), Unfit> {
        if at > now.saturating_add(self.skew) {
            return Err(Unfit::Future);
        }
        // Forget what the time check refuses anyway.
        while let Some((sent, _)) = self.order.first() {
            if sent.saturating_add(self.max_age) > now {
                break;
            }
            if let Some((_, old)) = self.order.pop_first() {
                self.ids.remove(&old);
            }
        }
        if at.saturating_add(self.max_age) <= now || at < self.floor {
            return Err(Unfit::Old);
        }
        if self.ids.contains(id) {
            return Err(Unfit::Replayed);
        }
        // At the cap the oldest is forgotten and nothing as old taken any more: a message no
        // later than it is refused before anything is forgotten for it.
        if self.ids.len() >= self.cap && self.order.first().is_some_and(|(sent, _)| at <= *sent) {
            return Err(Unfit::Old);
        }
        while self.ids.len() >= self.cap {
            let Some((sent, old)) = self.order.pop_first() else {
                break;
            };
            self.ids.remove(&old);
            self.floor = self.floor.max(sent.saturating_add(1));
            if at < self.floor {
                return Err(Unfit::Old);
            }
        }
        self.ids.insert(id.to_owned());
        self.order.insert((at, id.to_owned()));
        Ok(())
    }

    /// How many ids are kept.
    #[cfg(test)]
    pub fn len(&self) -> usize {
        self.ids.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_sealed_message_opens_only_on_its_subject_and_with_its_key() {
        let key = BusKey::derive(&[7; 32]);
        let sealed = key.seal(1, "p.rpc.a", b"call");
        assert_eq!(key.open("p.rpc.a", &sealed), Some((1, b"call".to_vec())));
        assert_eq!(
            key.open("p.rpc.b", &sealed),
            None,
            "moved to another subject"
        );
        assert_eq!(BusKey::derive(&[8; 32]).open("p.rpc.a", &sealed), None);
        let mut altered = sealed.clone();
        altered[2] = 2;
        assert_eq!(key.open("p.rpc.a", &altered), None, "another version");
        assert!(!sealed.windows(4).any(|w| w == b"call"));
        assert_eq!(key.open("p.rpc.a", b"[\"op\", {}]"), None);
    }

    #[test]
    fn an_id_is_taken_once_while_it_is_kept() {
        let mut seen = Seen::new(100, 10, 1000);
        assert_eq!(seen.take("a", 0, 0), Ok(()));
        assert_eq!(seen.take("a", 0, 50), Err(Unfit::Replayed));
        assert_eq!(seen.take("b", 60, 60), Ok(()));
        // Past its window it is refused by its time, and forgotten.
        assert_eq!(seen.take("a", 0, 101), Err(Unfit::Old));
        assert_eq!(seen.len(), 1);
    }

    /// A sender whose clock runs ahead gains no more than the skew: what is later is refused
    /// and nothing is kept for it; arithmetic near the end of time saturates.
    #[test]
    fn a_message_from_the_future_is_refused_and_kept_nowhere() {
        let mut seen = Seen::new(100, 10, 1000);
        assert_eq!(seen.take("late", 1_000, 500), Err(Unfit::Future));
        assert_eq!(seen.take("max", u64::MAX, 500), Err(Unfit::Future));
        assert_eq!(seen.take("skewed", 510, 500), Ok(()));
        assert_eq!(seen.len(), 1);
        let mut end = Seen::new(1_000, 10, 10);
        assert_eq!(end.take("x", u64::MAX - 5, u64::MAX - 10), Ok(()));
        assert_eq!(
            end.take("x", u64::MAX - 5, u64::MAX - 8),
            Err(Unfit::Replayed)
        );
        assert_eq!(end.take("y", u64::MAX, u64::MAX - 20), Err(Unfit::Future));
    }

    /// Past the cap the oldest id is forgotten, and nothing sent as early as it is taken
    /// again: a forgotten id cannot come back.
    #[test]
    fn past_the_cap_the_oldest_is_forgotten_and_never_taken_again() {
        let mut seen = Seen::new(10_000, 10, 3);
        for (i, id) in ["a", "b", "c", "d"].iter().enumerate() {
            assert_eq!(seen.take(id, 100 + i as u64, 200), Ok(()));
        }
        assert_eq!(seen.len(), 3);
        assert_eq!(seen.take("a", 100, 300), Err(Unfit::Old));
        assert_eq!(seen.take("e", 99, 300), Err(Unfit::Old));
        // Nothing before the floor either.
        seen.raise_floor(1_000);
        assert_eq!(seen.take("f", 999, 1_000), Err(Unfit::Old));
        assert_eq!(seen.take("g", 1_000, 1_000), Ok(()));
    }

    /// At the cap, a message older than every id kept is refused without forgetting one:
    /// the ids kept and the floor stay as they were.
    #[test]
    fn at_the_cap_an_older_message_evicts_nothing() {
        let mut seen = Seen::new(10_000, 10, 3);
        for (i, id) in ["a", "b", "c"].iter().enumerate() {
            assert_eq!(seen.take(id, 100 + i as u64, 200), Ok(()));
        }
        assert_eq!(seen.take("x", 50, 200), Err(Unfit::Old));
        assert_eq!(seen.len(), 3);
        assert_eq!(seen.take("a", 100, 200), Err(Unfit::Replayed));
        // Sent as early as the oldest kept is refused too (forgetting it would refuse it).
        assert_eq!(seen.take("y", 100, 200), Err(Unfit::Old));
        assert_eq!(seen.len(), 3);
        assert_eq!(seen.take("a", 100, 200), Err(Unfit::Replayed));
        // A later one takes the oldest's place.
        assert_eq!(seen.take("d", 103, 200), Ok(()));
        assert_eq!(seen.take("b", 101, 200), Err(Unfit::Replayed));
    }
}
