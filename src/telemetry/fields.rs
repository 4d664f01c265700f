//! Fields as the text log writes them: `name=value`, control characters escaped, the credentials
//! of any URL hidden.

use std::borrow::Cow;
use std::cell::RefCell;
use std::fmt::{self, Write as _};

use tracing::field::{Field, Visit};
use tracing_subscriber::field::RecordFields;
use tracing_subscriber::fmt::FormatFields;
use tracing_subscriber::fmt::format::Writer;

/// Fields as the default formatter writes them (`name=value`, the message bare), without its
/// styling, with terminal control characters escaped in every value, not only the message, and
/// with every URL's password and query values shown as `***` (see [`redacted`]).
/// A request's span is formatted as it opens, for every request: painting each field's name cost
/// more than the rest of the span.
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct PlainFields;

impl<'w> FormatFields<'w> for PlainFields {
    fn format_fields<R: RecordFields>(&self, mut writer: Writer<'w>, fields: R) -> fmt::Result {
        // Written piece by piece, a span's fields grew their string five times or more; put
        // together here first, they are one write (and one allocation) there.
        SCRATCH.with(|scratch| match scratch.try_borrow_mut() {
            Ok(mut scratch) => {
                scratch.clear();
                let formatted = record(Writer::new(&mut *scratch), fields);
                let written = formatted.and_then(|()| writer.write_str(&redacted(&scratch)));
                if scratch.capacity() > SCRATCH_KEPT {
                    *scratch = String::new();
                }
                written
            }
            // Formatting a field logged something: put together apart.
            Err(_) => {
                let mut own = String::new();
                record(Writer::new(&mut own), fields)?;
                writer.write_str(&redacted(&own))
            }
        })
    }
}

/// `fields` with the password and query values of every URL in them shown as `***`, by the
/// function that hides them in the bridge's own error texts (`a2e::redact_text`). Every line
/// goes through it, the dependencies' too: rmcp and reqwest print an upstream's URL whole
/// (`error sending request for url (http://…/mcp?api_key=…)`) when a request fails. Most lines
/// hold no URL, and finding none costs one scan for `://`, without allocating.
pub(super) fn redacted(fields: &str) -> Cow<'_, str> {
    let has_credentials = |text: &str| text.contains('?') || text.contains('@');
    if fields.contains("://") && has_credentials(fields) {
        Cow::Owned(crate::a2e::redact_text(fields, &[]))
    } else {
        Cow::Borrowed(fields)
    }
}

thread_local! {
    /// Where each thread puts a record's fields together (see `format_fields`).
    static SCRATCH: RefCell<String> = const { RefCell::new(String::new()) };
}

/// The most a scratch string keeps between records.
const SCRATCH_KEPT: usize = 4096;

fn record<R: RecordFields>(out: Writer<'_>, fields: R) -> fmt::Result {
    let mut visitor = PlainVisitor {
        out,
        result: Ok(()),
        first: true,
    };
    fields.record(&mut visitor);
    visitor.result
}

struct PlainVisitor<'w> {
    out: Writer<'w>,
    result: fmt::Result,
    first: bool,
}

impl PlainVisitor<'_> {
    /// Writes the separator and the field's name (the message has none); false when the field
    /// is skipped (`log.*` fields are the `log` crate's metadata, already shown).
    fn named(&mut self, field: &Field) -> bool {
        let name = field.name();
        if self.result.is_err() || name.starts_with("log.") {
            return false;
        }
        let pad = if std::mem::take(&mut self.first) {
            ""
        } else {
            " "
        };
        // Pieces written as they are: `write!` would run the formatting machinery for each.
        self.result = match name.strip_prefix("r#").unwrap_or(name) {
            "message" => self.out.write_str(pad),
            name => (self.out.write_str(pad))
                .and_then(|()| self.out.write_str(name))
                .and_then(|()| self.out.write_char('=')),
        };
        self.result.is_ok()
    }
}

impl Visit for PlainVisitor<'_> {
    fn record_str(&mut self, field: &Field, value: &str) {
        if field.name() == "message" {
            return self.record_debug(field, &format_args!("{value}"));
        }
        if !self.named(field) {
            return;
        }
        // Debug escapes every control character itself, a char at a time; a value that is
        // all printable ASCII but quotes and backslashes (route, ids) reads the same quoted.
        let plain = |b: &u8| matches!(b, b' '..=b'~') && !matches!(b, b'"' | b'\\');
        self.result = if value.as_bytes().iter().all(plain) {
            (self.out.write_char('"'))
                .and_then(|()| self.out.write_str(value))
                .and_then(|()| self.out.write_char('"'))
        } else {
            write!(self.out, "{value:?}")
        };
    }

    fn record_debug(&mut self, field: &Field, value: &dyn fmt::Debug) {
        if self.named(field) {
            self.result = write!(Escaping(&mut self.out), "{value:?}");
        }
    }
}

/// A writer that escapes what a terminal would act on: ESC, BEL, BS, FF, DEL and the C1 controls
/// (as `tracing-subscriber` escapes a message).
struct Escaping<W>(W);

impl<W: fmt::Write> fmt::Write for Escaping<W> {
    fn write_str(&mut self, text: &str) -> fmt::Result {
        // C1 controls are U+0080..U+009F: 0xC2 then 0x80..0x9F in UTF-8.
        let risky = |b: &u8| matches!(b, 0x07 | 0x08 | 0x0c | 0x1b | 0x7f | 0xc2);
        if !text.as_bytes().iter().any(risky) {
            return self.0.write_str(text);
        }
        for ch in text.chars() {
            match ch {
                '\x07' | '\x08' | '\x0c' | '\x1b' | '\x7f' => {
                    write!(self.0, "\\x{:02x}", ch as u32)?
                }
                '\u{80}'..='\u{9f}' => write!(self.0, "\\u{{{:x}}}", ch as u32)?,
                ch => self.0.write_char(ch)?,
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strings_are_quoted_as_debug_quotes_them() {
        let values = [
            "/v1/tools/call",
            "6f1c2a9e-0d5b-4c1e-9a7f-2b8c3d4e5f60",
            "",
            "say \"hi\"",
            "back\\slash",
            "tab\there",
            "caf\u{e9}",
            "\x1b[31m",
            "~ !#$%&'()*+,-./:;<=>?@[]^_`{|}",
        ];
        let lines = lines_logged(|| {
            for value in values {
                tracing::info!(value);
            }
        });
        for (line, value) in lines.iter().zip(values) {
            assert_eq!(line.trim_end(), format!("value={value:?}"));
        }
        assert_eq!(lines.len(), values.len());
    }

    #[test]
    fn control_characters_are_escaped_and_the_rest_kept() {
        let mut out = Escaping(String::new());
        write!(out, "plain \u{e9}t\u{e9} \x1b[31mred\x07 \u{9b}0m").unwrap();
        assert_eq!(out.0, "plain \u{e9}t\u{e9} \\x1b[31mred\\x07 \\u{9b}0m");
    }

    #[test]
    fn fields_read_as_the_default_formatter_writes_them() {
        // An event's fields, recorded through a subscriber that formats them as ours does.
        let lines = lines_logged(|| {
            let route = "/v1/tools/call";
            let span = tracing::info_span!("request", method = %"POST", route);
            let _in = span.enter();
            tracing::info!(status = 200, r#type = "x", note = %"a\x1bb", "answered {}", 1);
        });
        assert_eq!(lines.len(), 1, "{lines:?}");
        assert_eq!(
            lines[0].trim_end(),
            "request{method=POST route=\"/v1/tools/call\"}: answered 1 status=200 type=\"x\" note=a\\x1bb"
        );
    }

    #[test]
    fn urls_in_any_field_are_shown_without_their_credentials() {
        let lines = lines_logged(|| {
            tracing::info!("plain line with a ? and no URL");
            let span = tracing::info_span!("worker", url = "http://h:1/mcp?api_key=SPANKEY1");
            let _in = span.enter();
            tracing::error!(
                session_id = "s1",
                "fail to delete session: error sending request for url \
                 (http://127.0.0.1:9/mcp?api_key=MSGKEY1&x=2): Connection refused"
            );
            tracing::warn!(error = ?std::io::Error::other("GET https://u:PASSKEY1@h/x failed"));
        });
        assert_eq!(lines.len(), 3, "{lines:?}");
        let all = lines.concat();
        for secret in ["SPANKEY1", "MSGKEY1", "PASSKEY1"] {
            assert!(!all.contains(secret), "{secret} in {all}");
        }
        assert_eq!(lines[0].trim_end(), "plain line with a ? and no URL");
        assert!(
            lines[1].contains("(http://127.0.0.1:9/mcp?api_key=***&x=***)"),
            "{}",
            lines[1]
        );
        assert!(
            lines[1].contains("url=\"http://h:1/mcp?api_key=***\""),
            "{}",
            lines[1]
        );
        assert!(
            lines[2].contains("https://u:***@h/x failed"),
            "{}",
            lines[2]
        );
    }

    #[test]
    fn a_line_without_a_url_is_not_copied() {
        let line = "answered status=200 route=\"/v1/tools/call?x\"";
        assert!(matches!(redacted(line), Cow::Borrowed(_)));
        let url = "GET http://h/p without credentials";
        assert_eq!(redacted(url), url);
    }

    /// The lines `log` writes through a subscriber that formats fields as ours does (without
    /// time, target, level or colours).
    fn lines_logged(log: impl FnOnce()) -> Vec<String> {
        let (sink, rx) = crate::telemetry::sink::lines();
        let subscriber = tracing_subscriber::fmt()
            .fmt_fields(PlainFields)
            .without_time()
            .with_target(false)
            .with_level(false)
            .with_ansi(false)
            .with_writer(sink)
            .finish();
        tracing::subscriber::with_default(subscriber, log);
        rx.try_iter().collect()
    }
}
