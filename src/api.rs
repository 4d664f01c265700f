//! The REST API: one router per resource (each in `api/`), merged here with the auth layer, the
//! OpenAPI document generated from those same routers, and Swagger UI.

mod a2a;
mod a2e;
mod answers;
mod audit;
mod discovery;
mod events;
mod health;
mod prompts;
mod resources;
mod roots;
mod servers;
mod tools;

use axum::Router;
use axum::extract::{DefaultBodyLimit, MatchedPath};
use axum::http::StatusCode;
use axum::middleware;
use tower::ServiceBuilder;
use tower_http::request_id::{MakeRequestUuid, PropagateRequestIdLayer, SetRequestIdLayer};
use tower_http::trace::TraceLayer;
use utoipa::openapi::security::{HttpAuthScheme, HttpBuilder, SecurityScheme};
use utoipa::{Modify, OpenApi};
use utoipa_axum::router::OpenApiRouter;
use utoipa_swagger_ui::SwaggerUi;

use crate::a2e::ErrorCode;
use crate::auth::require_agent;
use crate::error::ApiError;
use crate::state::AppState;

/// A successful answer: its status and its A2E response message.
pub type Reply<T> = (StatusCode, axum::Json<T>);

fn ok<T>(body: T) -> Reply<T> {
    (StatusCode::OK, axum::Json(body))
}

/// A request message built from a GET or DELETE, with the `?id=` it was given.
fn request<M: crate::a2e::Message + Default>(id: Option<String>) -> M {
    let mut msg = M::default();
    if let Some(id) = id {
        msg.set_id(id);
    }
    msg
}

#[derive(OpenApi)]
#[openapi(
    info(
        title = "mcp-bridge",
        description = "The MCP capability of an A2E host: register MCP servers, use their tools \
                       through one catalogue. Every /v1 route needs a JWT bearer token."
    ),
    modifiers(&BearerAuth),
    components(schemas(crate::a2e::ErrorBody, crate::a2e::ErrorCode)),
    tags(
        (name = "servers", description = "MCP server lifecycle (mcp/server/*)"),
        (name = "tools", description = "The synced tool catalogue (tool/list, tool/call)"),
        (name = "resources", description = "Resources and templates across servers (mcp/resource/*)"),
        (name = "prompts", description = "Prompts across servers and argument completions (mcp/prompt/*)"),
        (name = "events", description = "The agent's event stream, its answers to servers' requests, its roots"),
        (name = "a2a", description = "A2A agents reached by the agent-bridge tools"),
        (name = "a2e", description = "Any A2E request message as it is on the wire"),
        (name = "audit", description = "Who changed which server or agent, and when (admins)"),
        (name = "health", description = "Liveness and readiness")
    )
)]
struct ApiDoc;

struct BearerAuth;

impl Modify for BearerAuth {
    fn modify(&self, openapi: &mut utoipa::openapi::OpenApi) {
        let components = openapi.components.get_or_insert_with(Default::default);
        components.add_security_scheme(
            "bearer",
            SecurityScheme::Http(
                HttpBuilder::new()
                    .scheme(HttpAuthScheme::Bearer)
                    .bearer_format("JWT")
                    .build(),
            ),
        );
    }
}

/// The `/v1` routes and the public ones, with the OpenAPI document they make.
fn routes() -> (Router<AppState>, Router<AppState>, utoipa::openapi::OpenApi) {
    let (v1, v1_doc) = OpenApiRouter::new()
        .merge(servers::router())
        .merge(tools::router())
        .merge(resources::router())
        .merge(prompts::router())
        .merge(events::router())
        .merge(answers::router())
        .merge(roots::router())
        .merge(a2a::router())
        .merge(a2e::router())
        .merge(audit::router())
        .split_for_parts();
    let (public, public_doc) = OpenApiRouter::with_openapi(ApiDoc::openapi())
        .merge(health::router())
        .split_for_parts();
    let mut doc = public_doc;
    doc.merge(v1_doc);
    answer_rate_limits(&mut doc);
    pin_request_types(&mut doc);
    (v1, public, doc)
}

/// A request body's `type` can only be the message its endpoint takes, or empty or absent (the
/// same): its schema says so with an enum (the macro that declares messages can only give it as
/// the default).
fn pin_request_types(doc: &mut utoipa::openapi::OpenApi) {
    use utoipa::openapi::{RefOr, Schema};
    let mut bodies = std::collections::BTreeSet::new();
    for item in doc.paths.paths.values() {
        for operation in [&item.post, &item.put, &item.patch].into_iter().flatten() {
            let Some(RefOr::T(body)) = &operation.request_body else {
                continue;
            };
            for content in body.content.values() {
                if let RefOr::T(content) = content
                    && let Some(RefOr::Ref(r)) = &content.schema
                {
                    bodies.insert(
                        r.ref_location
                            .trim_start_matches("#/components/schemas/")
                            .to_owned(),
                    );
                }
            }
        }
    }
    let Some(components) = doc.components.as_mut() else {
        return;
    };
    for name in bodies {
        let Some(RefOr::T(Schema::Object(object))) = components.schemas.get_mut(&name) else {
            continue;
        };
        if let Some(RefOr::T(Schema::Object(kind))) = object.properties.get_mut("type")
            && let Some(default @ serde_json::Value::String(_)) = kind.default.clone()
        {
            kind.enum_values = Some(vec![default, serde_json::Value::String(String::new())]);
        }
    }
}

/// Every `/v1` operation may answer 429 (the per-agent limits, `crate::limits`).
fn answer_rate_limits(doc: &mut utoipa::openapi::OpenApi) {
    use utoipa::openapi::schema::{ObjectBuilder, Type};
    use utoipa::openapi::{ContentBuilder, HeaderBuilder, Ref, ResponseBuilder};
    let response = ResponseBuilder::new()
        .description("The agent's rate or concurrency limit is reached (`rate_limited`)")
        .content(
            "application/json",
            ContentBuilder::new()
                .schema(Some(Ref::from_schema_name("ErrorBody")))
                .build(),
        )
        .header(
            "Retry-After",
            HeaderBuilder::new()
                .schema(Some(ObjectBuilder::new().schema_type(Type::Integer)))
                .description(Some("Seconds to wait before trying again"))
                .build(),
        )
        .build();
    for (path, item) in doc.paths.paths.iter_mut() {
        if !path.starts_with("/v1") {
            continue;
        }
        for operation in [
            &mut item.get,
            &mut item.post,
            &mut item.put,
            &mut item.patch,
            &mut item.delete,
        ]
        .into_iter()
        .flatten()
        {
            operation
                .responses
                .responses
                .insert("429".into(), response.clone().into());
        }
    }
}

/// The OpenAPI document of the API.
pub fn openapi() -> utoipa::openapi::OpenApi {
    routes().2
}

/// The whole HTTP application.
pub fn router(state: AppState) -> Router {
    let (v1, public, doc) = routes();
    // Each group of layers is one `ServiceBuilder` (outermost first), added once: axum boxes
    // every `layer` call around every route and clones each box per request. The caller is
    // known before its limits are counted.
    let v1 = v1.route_layer(
        ServiceBuilder::new()
            .layer(middleware::from_fn_with_state(
                state.clone(),
                require_agent_layer,
            ))
            .layer(middleware::from_fn_with_state(
                state.clone(),
                crate::limits::limit_agent,
            )),
    );
    let mcp = Router::new()
        .route_service("/mcp", crate::mcp_server::service(state.clone()))
        .layer(
            ServiceBuilder::new()
                .layer(middleware::from_fn_with_state(
                    state.clone(),
                    crate::mcp_server::authenticate,
                ))
                .layer(middleware::from_fn_with_state(
                    state.clone(),
                    crate::limits::limit_agent,
                )),
        );
    Router::new()
        .merge(v1)
        .merge(mcp)
        .merge(public)
        .merge(discovery::router())
        .merge(SwaggerUi::new("/docs").url("/openapi.json", doc))
        .fallback(not_found)
        .layer(
            ServiceBuilder::new()
                .layer(SetRequestIdLayer::x_request_id(MakeRequestUuid))
                .layer(PropagateRequestIdLayer::x_request_id())
                .layer(
                    TraceLayer::new_for_http()
                        .make_span_with(request_span)
                        .on_response(log_response),
                )
                .layer(middleware::from_fn_with_state(state.clone(), count_request))
                .layer(DefaultBodyLimit::max(state.config.max_body_bytes)),
        )
        .with_state(state)
}

/// One line per answered request: refusals and failures at info, the rest at debug (a line per
/// successful call costs a busy gateway measurably; /metrics counts every request by route and
/// status).
fn log_response(
    resp: &axum::response::Response,
    latency: std::time::Duration,
    _span: &tracing::Span,
) {
    let status = resp.status().as_u16();
    let latency_ms = latency.as_secs_f64() * 1000.0;
    if resp.status().is_client_error() || resp.status().is_server_error() {
        tracing::info!(status, latency_ms, "request answered");
    } else {
        tracing::debug!(status, latency_ms, "request answered");
    }
}

/// The span of one request: method, route (not the raw path) and request id. Headers, and so
/// tokens, are never recorded.
fn request_span(req: &axum::extract::Request) -> tracing::Span {
    let route = req
        .extensions()
        .get::<MatchedPath>()
        .map(MatchedPath::as_str)
        .unwrap_or("unmatched");
    let request_id = req
        .headers()
        .get("x-request-id")
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default();
    tracing::info_span!("request", method = %req.method(), route, request_id)
}

async fn require_agent_layer(
    axum::extract::State(state): axum::extract::State<AppState>,
    req: axum::extract::Request,
    next: middleware::Next,
) -> axum::response::Response {
    require_agent(axum::extract::State(state.auth.clone()), req, next).await
}

/// Counts each answered request by its route (not its raw path) and status.
async fn count_request(
    axum::extract::State(state): axum::extract::State<AppState>,
    req: axum::extract::Request,
    next: middleware::Next,
) -> axum::response::Response {
    let route = req
        .extensions()
        .get::<MatchedPath>()
        .map_or_else(|| "unmatched".to_owned(), |p| p.as_str().to_owned());
    let resp = next.run(req).await;
    state.metrics.http_request(&route, resp.status().as_u16());
    resp
}

async fn not_found() -> ApiError {
    ApiError::new(ErrorCode::NotFound, "no such route")
}
