//! The error every endpoint answers with: a stable `code`, a human sentence and an HTTP status
//! (the table in ARCHITECTURE.md "Errors"), rendered as the endpoint's A2E response message.

use axum::Json;
use axum::extract::rejection::JsonRejection;
use axum::extract::{FromRequest, FromRequestParts, Request};
use axum::http::StatusCode;
use axum::http::request::Parts;
use axum::response::{IntoResponse, Response};
use serde::de::DeserializeOwned;

use crate::a2e::{self, ErrorBody, ErrorCode, Message};

/// A failed request: what went wrong, for the caller.
#[derive(Debug, Clone)]
pub struct ApiError {
    pub code: ErrorCode,
    pub message: String,
    pub status: StatusCode,
    /// With `mcp_auth_required`: the link that gives the authorization the call needs.
    pub authorization_url: Option<String>,
}

impl ApiError {
    pub fn new(code: ErrorCode, message: impl Into<String>) -> Self {
        Self {
            code,
            message: message.into(),
            status: status_of(code),
            authorization_url: None,
        }
    }

    /// A field that is present but not acceptable (422).
    pub fn invalid(message: impl Into<String>) -> Self {
        Self::new(ErrorCode::InvalidRequest, message)
    }

    pub fn forbidden(message: impl Into<String>) -> Self {
        Self::new(ErrorCode::Forbidden, message)
    }

    pub fn conflict(message: impl Into<String>) -> Self {
        Self::new(ErrorCode::Conflict, message)
    }

    /// An error whose details are for the log only: the caller gets an opaque 500.
    pub fn internal(error: impl std::fmt::Display) -> Self {
        Self::new(ErrorCode::Internal, a2e::internal_error(error))
    }

    pub fn with_status(mut self, status: StatusCode) -> Self {
        self.status = status;
        self
    }

    /// This error as the answer of the endpoint whose response message is `R`.
    pub fn answering<R: a2e::Response + serde::Serialize>(self, req_id: &str) -> Failure {
        let has_ok = serde_json::to_value(R::default())
            .map(|v| v.get("ok").is_some())
            .unwrap_or(false);
        Failure {
            error: self,
            kind: R::TYPE,
            has_ok,
            req_id: req_id.to_owned(),
        }
    }

    fn body(&self, kind: &str, req_id: &str, has_ok: bool) -> ErrorBody {
        ErrorBody {
            kind: kind.to_owned(),
            id: a2e::new_id(),
            version: a2e::VERSION.to_owned(),
            ts: a2e::now(),
            req_id: req_id.to_owned(),
            ok: has_ok.then_some(false),
            error: self.message.clone(),
            code: self.code,
            retryable: self.code.retryable(),
            authorization_url: self.authorization_url.clone(),
        }
    }
}

impl std::fmt::Display for ApiError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.code.as_str(), self.message)
    }
}

/// The HTTP status of each code, unless the error says otherwise.
pub fn status_of(code: ErrorCode) -> StatusCode {
    use ErrorCode::*;
    match code {
        McpServerNotFound | McpToolNotFound | McpResourceNotFound | McpPromptNotFound
        | NotFound => StatusCode::NOT_FOUND,
        McpServerUnavailable => StatusCode::SERVICE_UNAVAILABLE,
        McpTransportError | McpProtocolError => StatusCode::BAD_GATEWAY,
        Timeout => StatusCode::GATEWAY_TIMEOUT,
        McpCapabilityMissing => StatusCode::NOT_IMPLEMENTED,
        McpSamplingRefused | McpAuthRequired | Forbidden | DeniedByHook => StatusCode::FORBIDDEN,
        InvalidRequest => StatusCode::UNPROCESSABLE_ENTITY,
        Unauthorized => StatusCode::UNAUTHORIZED,
        // A call its own agent cancelled: the request lost to a later one of the same agent
        // (its DELETE). 409, not a 5xx a client or proxy would retry, nor the non-standard 499.
        Conflict | Cancelled => StatusCode::CONFLICT,
        PayloadTooLarge => StatusCode::PAYLOAD_TOO_LARGE,
        RateLimited => StatusCode::TOO_MANY_REQUESTS,
        Internal => StatusCode::INTERNAL_SERVER_ERROR,
    }
}

/// An error before the request was read: `type` `"error"`, empty `req_id`.
impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let body = self.body("error", "", false);
        with_retry_after((self.status, Json(body)).into_response())
    }
}

/// Every 429 says when to try again: [`DEFAULT_RETRY_AFTER`] seconds unless its route says
/// otherwise (the per-agent limits set their own).
fn with_retry_after(mut resp: Response) -> Response {
    if resp.status() == StatusCode::TOO_MANY_REQUESTS {
        resp.headers_mut()
            .entry(axum::http::header::RETRY_AFTER)
            .or_insert(axum::http::HeaderValue::from_static(DEFAULT_RETRY_AFTER));
    }
    resp
}

/// Seconds a 429 asks to wait when its route does not know better.
const DEFAULT_RETRY_AFTER: &str = "5";

/// An error answered as a given endpoint's response message.
#[derive(Debug)]
pub struct Failure {
    pub error: ApiError,
    kind: &'static str,
    has_ok: bool,
    req_id: String,
}

impl Failure {
    /// The error answer's body.
    pub fn body(&self) -> ErrorBody {
        self.error.body(self.kind, &self.req_id, self.has_ok)
    }
}

impl IntoResponse for Failure {
    fn into_response(self) -> Response {
        let body = self.error.body(self.kind, &self.req_id, self.has_ok);
        with_retry_after((self.error.status, Json(body)).into_response())
    }
}

/// A JSON body that is an A2E request message: bad JSON, a wrong content type, an invalid field
/// or a foreign `type` get the A2E error shape.
pub struct A2eJson<T>(pub T);

impl<S, T> FromRequest<S> for A2eJson<T>
where
    S: Send + Sync,
    T: DeserializeOwned + Message,
{
    type Rejection = ApiError;

    async fn from_request(req: Request, state: &S) -> Result<Self, Self::Rejection> {
        if !plain_json(req.headers()) {
            let Json(value) = Json::<serde_json::Value>::from_request(req, state)
                .await
                .map_err(json_rejection)?;
            return Self::from_value(value);
        }
        let bytes = axum::body::Bytes::from_request(req, state)
            .await
            .map_err(|e| json_rejection(e.into()))?;
        // A well-formed message is read in one pass; anything else is read again the careful way
        // for the error that says where it is wrong.
        let object = bytes.iter().find(|b| !b.is_ascii_whitespace()) == Some(&b'{');
        if object && let Ok(value) = serde_json::from_slice::<T>(&bytes) {
            value.check_type().map_err(ApiError::invalid)?;
            return Ok(Self(value));
        }
        let Json(value) = Json::<serde_json::Value>::from_bytes(&bytes).map_err(json_rejection)?;
        Self::from_value(value)
    }
}

impl<T: DeserializeOwned + Message> A2eJson<T> {
    fn from_value(mut value: serde_json::Value) -> Result<Self, ApiError> {
        // A message is a JSON object (serde would also take an array as a struct's fields).
        if !value.is_object() {
            return Err(ApiError::invalid(
                "the body must be a JSON object (an A2E message)",
            ));
        }
        // `null` for an optional field is an absent field (generated clients send them). The
        // envelope of `/v1/a2e` names its message in the body.
        let kind = match T::TYPE {
            "" => value["type"].as_str().unwrap_or_default().to_owned(),
            kind => kind.to_owned(),
        };
        crate::a2e::drop_nulls(&kind, &mut value);
        let value: T = serde_path_to_error::deserialize(value).map_err(|e| {
            ApiError::invalid(format!(
                "Failed to deserialize the JSON body into the target type: {e}"
            ))
        })?;
        value.check_type().map_err(ApiError::invalid)?;
        Ok(Self(value))
    }
}

/// Whether the request says `Content-Type: application/json` (with parameters or not), which
/// is what nearly every client sends; any other type is left to axum's check.
fn plain_json(headers: &axum::http::HeaderMap) -> bool {
    let Some(value) = headers.get(axum::http::header::CONTENT_TYPE) else {
        return false;
    };
    let value = value.as_bytes();
    let essence = value.split(|b| *b == b';').next().unwrap_or_default();
    essence
        .trim_ascii()
        .eq_ignore_ascii_case(b"application/json")
}

/// A JSON object body that is not an A2E message (a policy, a toolset), with the A2E error
/// shape on anything wrong with it.
pub struct JsonObject<T>(pub T);

impl<S, T> FromRequest<S> for JsonObject<T>
where
    S: Send + Sync,
    T: DeserializeOwned,
{
    type Rejection = ApiError;

    async fn from_request(req: Request, state: &S) -> Result<Self, Self::Rejection> {
        let Json(mut value) = Json::<serde_json::Value>::from_request(req, state)
            .await
            .map_err(json_rejection)?;
        if !value.is_object() {
            return Err(ApiError::invalid("the body must be a JSON object"));
        }
        crate::a2e::drop_nulls_two_levels(&mut value);
        serde_path_to_error::deserialize(value)
            .map(Self)
            .map_err(|e| ApiError::invalid(format!("the body is not valid: {e}")))
    }
}

pub fn json_rejection(rejection: JsonRejection) -> ApiError {
    let status = rejection.status();
    let code = match status {
        StatusCode::PAYLOAD_TOO_LARGE => ErrorCode::PayloadTooLarge,
        _ => ErrorCode::InvalidRequest,
    };
    ApiError::new(code, rejection.body_text()).with_status(status)
}

/// Query parameters with the A2E error shape on a bad value (422, as any invalid request).
pub struct A2eQuery<T>(pub T);

impl<S, T> FromRequestParts<S> for A2eQuery<T>
where
    S: Send + Sync,
    T: DeserializeOwned,
{
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, Self::Rejection> {
        axum::extract::Query::<T>::from_request_parts(parts, state)
            .await
            .map(|q| Self(q.0))
            .map_err(|e| {
                ApiError::new(ErrorCode::InvalidRequest, e.body_text())
                    .with_status(axum::http::StatusCode::UNPROCESSABLE_ENTITY)
            })
    }
}

impl From<crate::registry::Error> for ApiError {
    fn from(error: crate::registry::Error) -> Self {
        match error.code() {
            // The details are for the log only.
            ErrorCode::Internal => Self::internal(error),
            code => {
                let link = match &error {
                    crate::registry::Error::AuthRequired {
                        authorization_url, ..
                    } => authorization_url.clone(),
                    _ => None,
                };
                let mut answer = Self::new(code, error.to_string());
                answer.authorization_url = link;
                answer
            }
        }
    }
}

/// A store error that reaches a caller as it is: 503 while the database does not answer,
/// otherwise an opaque 500.
impl From<crate::access::Error> for ApiError {
    fn from(error: crate::access::Error) -> Self {
        match error.code() {
            // The details are for the log only.
            ErrorCode::Internal => Self::internal(error),
            code => Self::new(code, error.to_string()),
        }
    }
}

impl From<crate::store::StoreError> for ApiError {
    fn from(error: crate::store::StoreError) -> Self {
        match error.code() {
            // The details are for the log only.
            ErrorCode::Internal => Self::internal(error),
            code => Self::new(code, error.to_string()),
        }
    }
}

impl From<crate::a2a::A2aError> for ApiError {
    fn from(error: crate::a2a::A2aError) -> Self {
        match error.code() {
            // The details are for the log only.
            ErrorCode::Internal => Self::internal(error),
            code => Self::new(code, error.to_string()),
        }
    }
}
