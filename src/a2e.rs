//! A2E wire types: the envelope every message carries, the `mcp/*` messages, `tool/list` and `tool/call`,
//! the data models, the error codes and the notification methods. Field names and defaults follow
//! the seed specification.

mod access;
mod errors;
mod identity;
mod idp;
mod messages;
mod methods;
mod models;
mod nulls;
mod objects;
mod patch;
mod tasks;
mod values;

pub use access::*;
pub use errors::{ErrorBody, ErrorCode, internal_error};
pub use identity::UpstreamIdentity;
pub use idp::*;
pub use messages::*;
pub use methods::{NotificationMethod, TaskMethod};
pub use models::*;
pub use nulls::{drop_nulls, drop_nulls_two_levels};
pub use patch::Patch;
pub use tasks::*;
pub use values::*;

/// The A2E protocol version every message carries.
pub const VERSION: &str = "1.0";

/// A fresh message id (a UUID v4).
pub fn new_id() -> String {
    uuid::Uuid::new_v4().to_string()
}

/// Seconds since the Unix epoch, as A2E timestamps are.
pub fn now() -> f64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs_f64())
        .unwrap_or_default()
}

/// What every A2E message has: a fixed `type` and an `id`.
pub trait Message {
    /// The wire `type` of this message, e.g. `mcp/server/list/req`.
    const TYPE: &'static str;
    /// The `type` the message carried (or was given by default).
    fn kind(&self) -> &str;
    /// The message id, echoed as `req_id` by the response to a request.
    fn id(&self) -> &str;
    fn set_id(&mut self, id: String);

    /// Refuses a message whose `type` names another message. A missing `type` was already filled
    /// in by the defaults.
    fn check_type(&self) -> Result<(), String> {
        // An empty `type` is an absent one.
        if self.kind() == Self::TYPE || self.kind().is_empty() {
            Ok(())
        } else {
            Err(format!(
                "`type` is \"{}\" but this endpoint takes \"{}\"",
                self.kind(),
                Self::TYPE
            ))
        }
    }
}

/// A response message: built as the answer to a request whose id it echoes.
pub trait Response: Message + Default {
    fn set_req_id(&mut self, req_id: &str);

    /// A new response answering the request `req_id`.
    fn answering(req_id: &str) -> Self {
        let mut resp = Self::default();
        resp.set_req_id(req_id);
        resp
    }
}

/// The default of a field: the given expression, or the type's `Default`.
macro_rules! field_default {
    () => {
        Default::default()
    };
    ($d:expr) => {
        $d.into()
    };
}

/// Declares an A2E message: the envelope fields (`type`, `id`, `version`, `ts`) followed by its own.
/// Every field may be absent on the wire and takes its default (`type` its fixed value, `id` a new
/// UUID, `ts` now), as the seed's tables say. The schema of a field gives that default unless the
/// field says `#[schema(default)]` (no value: no `default`), as a required field does, whose
/// empty default would break its own `pattern` or `minLength`.
macro_rules! a2e_message {
    (
        $(#[$meta:meta])*
        $name:ident = $ty:literal {
            $( $(#[$fmeta:meta])* $field:ident : $fty:ty $(= $default:expr)? ),* $(,)?
        }
    ) => {
        $(#[$meta])*
        #[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize, utoipa::ToSchema)]
        #[serde(default)]
        pub struct $name {
            /// The A2E message type.
            #[serde(rename = "type")]
            #[schema(default = $ty, value_type = String)]
            pub kind: std::borrow::Cow<'static, str>,
            /// Message id; a UUID when absent.
            #[schema(default)]
            pub id: String,
            /// A2E protocol version.
            #[schema(example = "1.0", value_type = String)]
            pub version: std::borrow::Cow<'static, str>,
            /// Timestamp, seconds since the Unix epoch; now when absent.
            #[schema(default)]
            pub ts: f64,
            $( $(#[$fmeta])* pub $field: $fty, )*
        }

        impl Default for $name {
            fn default() -> Self {
                Self {
                    // Borrowed: a message built here, or parsed without them, copies neither.
                    kind: std::borrow::Cow::Borrowed($ty),
                    id: $crate::a2e::new_id(),
                    version: std::borrow::Cow::Borrowed($crate::a2e::VERSION),
                    ts: $crate::a2e::now(),
                    $( $field: $crate::a2e::field_default!($($default)?), )*
                }
            }
        }

        impl $crate::a2e::Message for $name {
            const TYPE: &'static str = $ty;
            fn kind(&self) -> &str {
                &self.kind
            }
            fn id(&self) -> &str {
                &self.id
            }
            fn set_id(&mut self, id: String) {
                self.id = id;
            }
        }
    };
}

/// Declares a response message: an [`a2e_message!`] with `req_id` first among its fields.
macro_rules! a2e_response {
    (
        $(#[$meta:meta])*
        $name:ident = $ty:literal { $($body:tt)* }
    ) => {
        $crate::a2e::a2e_message! {
            $(#[$meta])*
            $name = $ty {
                /// Echoes the request's `id`.
                req_id: String,
                $($body)*
            }
        }

        impl $crate::a2e::Response for $name {
            fn set_req_id(&mut self, req_id: &str) {
                req_id.clone_into(&mut self.req_id);
            }
        }
    };
}

pub(crate) use {a2e_message, a2e_response, field_default};

#[cfg(test)]
mod tests;
