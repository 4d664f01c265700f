//! The error answers of the OpenAPI document, one reusable response per status (its
//! description says which A2E error codes it carries; ARCHITECTURE.md "Errors"). Each is an
//! [`ErrorBody`]; a route lists the ones it can give, those that come with what it does as one
//! of the sets at the end ([`BodyErrors`], [`UpstreamErrors`]), each answer of a set a
//! reference to the response of its status here.

use utoipa::{IntoResponses, ToResponse};

use crate::a2e::ErrorBody;

/// The body is not JSON, or not an object (`invalid_request`).
#[derive(ToResponse)]
#[allow(dead_code)] // Documents the answer; `crate::http::error::ApiError` builds it.
pub struct BadRequest(ErrorBody);

/// No bearer token, or one that is not valid (`unauthorized`).
#[derive(ToResponse)]
#[allow(dead_code)]
pub struct Unauthorized(ErrorBody);

/// The token is valid but the agent may not do this: registering a stdio server needs the
/// `admin` role, a server or agent is changed or removed by its owner or an admin (`forbidden`);
/// or the upstream needs an OAuth authorization the caller has not given (`mcp_auth_required`,
/// with the `authorization_url` to open).
#[derive(ToResponse)]
#[allow(dead_code)]
pub struct Forbidden(ErrorBody);

/// What the request names does not exist or is not visible to this agent
/// (`mcp_server_not_found`, `mcp_tool_not_found`, `mcp_resource_not_found`,
/// `mcp_prompt_not_found`, `not_found`).
#[derive(ToResponse)]
#[allow(dead_code)]
pub struct NotFound(ErrorBody);

/// The request clashes with what exists: an id already taken, a name or URI offered by several
/// servers asked for without `server_id`, a request answered twice (`conflict`).
#[derive(ToResponse)]
#[allow(dead_code)]
pub struct Conflict(ErrorBody);

/// The body is larger than `MCP_BRIDGE_MAX_BODY_BYTES` (`payload_too_large`).
#[derive(ToResponse)]
#[allow(dead_code)]
pub struct PayloadTooLarge(ErrorBody);

/// The body is not sent as `application/json` (`invalid_request`).
#[derive(ToResponse)]
#[allow(dead_code)]
pub struct UnsupportedMediaType(ErrorBody);

/// A field is missing, of the wrong type or not a valid value; also an upstream's -32602
/// (`invalid_request`).
#[derive(ToResponse)]
#[allow(dead_code)]
pub struct UnprocessableContent(ErrorBody);

/// The server does not offer this capability, or the feature is turned off
/// (`mcp_capability_missing`).
#[derive(ToResponse)]
#[allow(dead_code)]
pub struct NotImplemented(ErrorBody);

/// The upstream could not be reached or answered outside the protocol (`mcp_transport_error`,
/// retryable; `mcp_protocol_error`).
#[derive(ToResponse)]
#[allow(dead_code)]
pub struct BadGateway(ErrorBody);

/// The server is not connected right now, the bridge's database does not answer, or (across
/// replicas) the replica holding the server or the request does not (`mcp_server_unavailable`,
/// retryable).
#[derive(ToResponse)]
#[allow(dead_code)]
pub struct ServiceUnavailable(ErrorBody);

/// The bridge's database does not answer (`mcp_server_unavailable`, retryable).
#[derive(ToResponse)]
#[allow(dead_code)]
pub struct StoreUnavailable(ErrorBody);

/// The upstream did not answer in time (`timeout`, retryable).
#[derive(ToResponse)]
#[allow(dead_code)]
pub struct GatewayTimeout(ErrorBody);

/// The agent's rate or concurrency limit is reached (`rate_limited`, retryable after
/// `Retry-After` seconds).
#[derive(ToResponse)]
#[response(headers(("Retry-After" = u64, description = "Seconds to wait before trying again")))]
#[allow(dead_code)]
pub struct TooManyRequests(ErrorBody);

/// What every `/v1` operation may answer before it runs: the layer in front of them all
/// (`api::admit`) checks the token and the caller's limits. The document gives the set to every
/// `/v1` operation, so no route lists it.
#[derive(IntoResponses)]
#[allow(dead_code)] // Documents the answers; nothing is built from it.
pub enum AdmissionErrors {
    #[response(status = 401)]
    Unauthorized(#[ref_response] Unauthorized),
    #[response(status = 429)]
    TooManyRequests(#[ref_response] TooManyRequests),
}

/// What a route that reads a JSON body may answer about it (`crate::http::error`'s extractors):
/// not JSON, too large, not sent as JSON, or not the message it takes.
#[derive(IntoResponses)]
#[allow(dead_code)]
pub enum BodyErrors {
    #[response(status = 400)]
    BadRequest(#[ref_response] BadRequest),
    #[response(status = 413)]
    PayloadTooLarge(#[ref_response] PayloadTooLarge),
    #[response(status = 415)]
    UnsupportedMediaType(#[ref_response] UnsupportedMediaType),
    #[response(status = 422)]
    UnprocessableContent(#[ref_response] UnprocessableContent),
}

/// What a route that asks an MCP server may answer when the server cannot give what it asks: a
/// capability it lacks, a broken or unavailable connection, no answer in time. A route whose
/// 503 is the bridge's own database (`StoreUnavailable`) lists its answers one by one instead:
/// a status has one answer in the document.
#[derive(IntoResponses)]
#[allow(dead_code)]
pub enum UpstreamErrors {
    #[response(status = 501)]
    NotImplemented(#[ref_response] NotImplemented),
    #[response(status = 502)]
    BadGateway(#[ref_response] BadGateway),
    #[response(status = 503)]
    ServiceUnavailable(#[ref_response] ServiceUnavailable),
    #[response(status = 504)]
    GatewayTimeout(#[ref_response] GatewayTimeout),
}
