//! OAuth to upstream servers: `POST /v1/servers/{server_id}/authorize` gives a person the link
//! to authorize a server with; the public `GET /oauth/callback` is where the authorization server
//! sends that person back, and `GET /oauth/client-metadata.json` the bridge's client ID metadata
//! document (used as its `client_id` where the authorization server takes one).

use axum::Extension;
use axum::Json;
use axum::extract::{Path, Query, State};
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde::{Deserialize, Serialize};
use utoipa::{IntoParams, ToSchema};
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use super::responses::{BadGateway, Forbidden, NotFound, UnprocessableContent};
use crate::caller::Caller;
use crate::http::error::ApiError;
use crate::http::state::AppState;

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new().routes(routes!(authorize))
}

pub fn public_router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(callback))
        .routes(routes!(client_metadata))
}

/// The link that authorizes a server.
#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct AuthorizeResponse {
    pub server_id: String,
    /// Open it in a browser and approve: the server then connects with nothing else to do.
    pub authorization_url: String,
}

/// A link for a person to authorize an OAuth-protected server with (its owner or an admin; for a
/// `per_agent` server, any agent, each for its own grant). The owner also gets it as a
/// `bridge/auth_required` event when the server starts waiting.
#[utoipa::path(post, path = "/v1/servers/{server_id}/authorize", tag = "servers",
    params(("server_id" = String, Path)), security(("bearer" = [])),
    responses(
        (status = 200, description = "The link to open", body = AuthorizeResponse), (status = 403, response = Forbidden),
        (status = 404, response = NotFound), (status = 422, response = UnprocessableContent),
        (status = 502, response = BadGateway)))]
async fn authorize(
    State(state): State<AppState>,
    Extension(agent): Extension<Caller>,
    Path(server_id): Path<String>,
) -> Result<Json<AuthorizeResponse>, ApiError> {
    let authorization_url = state.registry.authorize(&agent, &server_id).await?;
    Ok(Json(AuthorizeResponse {
        server_id,
        authorization_url,
    }))
}

/// What an authorization server sends the person back with (RFC 6749 §4.1.2, RFC 9207).
#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
struct Callback {
    /// The authorization's unguessable `state`.
    state: Option<String>,
    code: Option<String>,
    /// The issuer that answered (RFC 9207), checked when the server sends it.
    iss: Option<String>,
    /// Set when the authorization was refused.
    error: Option<String>,
    error_description: Option<String>,
}

/// Where the authorization server sends the person back: exchanges the code for tokens and
/// connects the server. Bound to the authorization's `state`, each one works once. Answers a
/// short text page for the person.
#[utoipa::path(get, path = "/oauth/callback", tag = "oauth", params(Callback),
    responses((status = 200, description = "Authorized: the server connects now", content_type = "text/plain", body = String),
        (status = 400, description = "A wrong, used or expired `state`, or a refused authorization", content_type = "text/plain", body = String),
        (status = 502, description = "The token endpoint failed", content_type = "text/plain", body = String)))]
async fn callback(State(state): State<AppState>, Query(back): Query<Callback>) -> Response {
    let Some(flow) = back.state.as_deref().filter(|s| !s.is_empty()) else {
        return page(
            StatusCode::BAD_REQUEST,
            "No `state`: this is not an authorization's answer.",
        );
    };
    let refused = back
        .error
        .as_deref()
        .map(|error| match &back.error_description {
            Some(description) => format!("{error} ({description})"),
            None => error.to_owned(),
        });
    let done = state
        .registry
        .complete_authorization(
            flow,
            back.code.as_deref(),
            back.iss.as_deref(),
            refused.as_deref(),
        )
        .await;
    match done {
        Ok(server_id) => {
            let status = state
                .registry
                .get(&server_id)
                .map(|entry| entry.state().status.as_str())
                .unwrap_or("unregistered");
            page(
                StatusCode::OK,
                &format!(
                    "Authorized: server \"{server_id}\" is {status}. You can close this page."
                ),
            )
        }
        Err(error) => {
            let status = match error.code() {
                crate::a2e::ErrorCode::InvalidRequest => StatusCode::BAD_REQUEST,
                crate::a2e::ErrorCode::Internal => StatusCode::INTERNAL_SERVER_ERROR,
                _ => StatusCode::BAD_GATEWAY,
            };
            let message = ApiError::from(error).message;
            page(
                status,
                &format!("The authorization did not go through: {message}"),
            )
        }
    }
}

/// A text page: whatever it quotes from upstreams stays text.
fn page(status: StatusCode, text: &str) -> Response {
    (
        status,
        [
            (header::CONTENT_TYPE, "text/plain; charset=utf-8"),
            (header::CACHE_CONTROL, "no-store"),
        ],
        format!("{text}\n"),
    )
        .into_response()
}

/// The bridge's OAuth client ID metadata document (SEP-991): where the bridge's public URL is
/// https, authorization servers that take such documents get this URL as the `client_id`.
#[utoipa::path(get, path = "/oauth/client-metadata.json", tag = "oauth",
    responses((status = 200, description = "The client ID metadata document", content_type = "application/json", body = Object)))]
async fn client_metadata(State(state): State<AppState>) -> Response {
    let settings = state.registry.oauth_settings();
    (
        [(header::CACHE_CONTROL, "public, max-age=300")],
        Json(settings.client_metadata()),
    )
        .into_response()
}
