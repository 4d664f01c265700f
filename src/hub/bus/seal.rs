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

use std::collections::{HashSet, VecDeque};

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

/// The ids of messages taken lately, to refuse one seen again: each id is kept until `until`
/// (milliseconds since the epoch), then forgotten.
#[derive(Default)]
pub struct Seen {
    ids: HashSet<String>,
    /// In the order they were taken, with when each is forgotten.
    order: VecDeque<(u64, String)>,
}

impl Seen {
    /// Whether `id` is new (and from now on known) at `now`, kept until `until`.
    pub fn first(&mut self, id: &str, now: u64, until: u64) -> bool {
        while let Some((expiry, _)) = self.order.front() {
            if *expiry > now {
                break;
            }
            if let Some((_, old)) = self.order.pop_front() {
                self.ids.remove(&old);
            }
        }
        if !self.ids.insert(id.to_owned()) {
            return false;
        }
        self.order.push_back((until, id.to_owned()));
        true
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
        let mut seen = Seen::default();
        assert!(seen.first("a", 0, 100));
        assert!(!seen.first("a", 50, 150));
        assert!(seen.first("b", 60, 160));
        // Forgotten after its time.
        assert!(seen.first("a", 101, 200));
    }
}
