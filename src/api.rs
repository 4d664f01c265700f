//! The REST API: one router per resource (each in `api/`), merged here with the auth layer, the
//! OpenAPI document generated from those same routers, Swagger UI and the operator console.

mod a2a;
mod a2e;
mod answers;
mod approvals;
mod audit;
mod calls;
mod console;
mod discovery;
mod events;
mod health;
mod oauth;
mod policies;
mod prompts;
mod resources;
mod responses;
mod roots;
mod servers;
mod tasks;
mod tools;
mod toolsets;

use axum::Router;
use axum::extract::DefaultBodyLimit;
use axum::http::StatusCode;
use axum::middleware;
use tower::ServiceBuilder;
use utoipa::openapi::security::{HttpAuthScheme, HttpBuilder, SecurityScheme};
use utoipa::{Modify, OpenApi};
use utoipa_axum::router::OpenApiRouter;
use utoipa_swagger_ui::SwaggerUi;

use crate::a2e::ErrorCode;
use crate::http::auth::keep_alive_after;
use crate::http::error::ApiError;
use crate::http::observe::ObserveLayer;
use crate::http::state::AppState;

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
                       through one catalogue. Every /v1 route needs a JWT bearer token. In a \
                       request body, `null` for an optional field means the same as leaving the \
                       field out (its default applies; in a PATCH the field stays as it is, but \
                       `\"auth\": null` removes the auth); free-form values such as a tool \
                       call's `arguments` are passed on as sent, nulls included. A value of the \
                       wrong type is still 422."
    ),
    // The document is served by the bridge itself: its API is at the same origin.
    servers((url = "/", description = "The bridge serving this document")),
    modifiers(&BearerAuth),
    components(
        schemas(crate::a2e::ErrorBody, crate::a2e::ErrorCode),
        responses(
            responses::BadRequest,
            responses::Unauthorized,
            responses::Forbidden,
            responses::NotFound,
            responses::Conflict,
            responses::PayloadTooLarge,
            responses::UnsupportedMediaType,
            responses::UnprocessableContent,
            responses::NotImplemented,
            responses::BadGateway,
            responses::ServiceUnavailable,
            responses::StoreUnavailable,
            responses::GatewayTimeout,
            responses::TooManyRequests,
        )
    ),
    tags(
        (name = "servers", description = "MCP server lifecycle (mcp/server/*)"),
        (name = "tools", description = "The synced tool catalogue (tool/list, tool/call)"),
        (name = "tasks", description = "Tool calls run as tasks: status, result, cancel (task/*)"),
        (name = "resources", description = "Resources and templates across servers (mcp/resource/*)"),
        (name = "prompts", description = "Prompts across servers and argument completions (mcp/prompt/*)"),
        (name = "events", description = "The agent's event stream, its answers to servers' requests, its roots"),
        (name = "a2a", description = "A2A agents reached by the agent-bridge tools"),
        (name = "a2e", description = "Any A2E request message as it is on the wire"),
        (name = "audit", description = "Who changed which server or agent, and when (admins)"),
        (name = "access", description = "Who sees what: access policies and toolsets (changed by admins)"),
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
        .merge(calls::router())
        .merge(tasks::router())
        .merge(resources::router())
        .merge(prompts::router())
        .merge(events::router())
        .merge(answers::router())
        .merge(roots::router())
        .merge(a2a::router())
        .merge(a2e::router())
        .merge(audit::router())
        .merge(policies::router())
        .merge(approvals::router())
        .merge(toolsets::router())
        .merge(oauth::router())
        .split_for_parts();
    let (public, public_doc) = OpenApiRouter::with_openapi(ApiDoc::openapi())
        .merge(health::router())
        .merge(oauth::public_router())
        .split_for_parts();
    let mut doc = public_doc;
    doc.merge(v1_doc);
    answer_admission(&mut doc);
    mark_public(&mut doc);
    pin_message_types(&mut doc);
    (v1, public, doc)
}

/// The operations outside `/v1` need no token: `security: []` says so (utoipa's `security(())`
/// can only write `[{}]`, an empty requirement, which means the same but reads as one).
fn mark_public(doc: &mut utoipa::openapi::OpenApi) {
    for (path, item) in doc.paths.paths.iter_mut() {
        if path.starts_with("/v1") {
            continue;
        }
        for operation in operations(item) {
            operation.security.get_or_insert_with(Vec::new);
        }
    }
}

fn operations(
    item: &mut utoipa::openapi::PathItem,
) -> impl Iterator<Item = &mut utoipa::openapi::path::Operation> {
    [
        &mut item.get,
        &mut item.post,
        &mut item.put,
        &mut item.patch,
        &mut item.delete,
    ]
    .into_iter()
    .flatten()
}

/// The names of the component schemas `roots` refer to, directly or through other schemas.
fn reachable_schemas(
    doc: &utoipa::openapi::OpenApi,
    roots: &[serde_json::Value],
) -> std::collections::BTreeSet<String> {
    fn refs(value: &serde_json::Value, out: &mut Vec<String>) {
        match value {
            serde_json::Value::Object(map) => {
                if let Some(serde_json::Value::String(r)) = map.get("$ref")
                    && let Some(name) = r.strip_prefix("#/components/schemas/")
                {
                    out.push(name.to_owned());
                }
                map.values().for_each(|v| refs(v, out));
            }
            serde_json::Value::Array(items) => items.iter().for_each(|v| refs(v, out)),
            _ => {}
        }
    }
    let schemas = doc.components.as_ref().map(|c| &c.schemas);
    let mut todo = Vec::new();
    for root in roots {
        refs(root, &mut todo);
    }
    let mut seen = std::collections::BTreeSet::new();
    while let Some(name) = todo.pop() {
        if !seen.insert(name.clone()) {
            continue;
        }
        if let Some(schema) = schemas.and_then(|s| s.get(&name)) {
            refs(&serde_json::to_value(schema).unwrap_or_default(), &mut todo);
        }
    }
    seen
}

/// What the schemas of messages say about their envelope and fields, which utoipa cannot say
/// from the Rust types alone: `#[serde(default)]` (every field of a request may be left out)
/// makes it mark no field `required`, in answers too, and the macro that declares messages can
/// give a message's `type` only as a default.
/// - A request body's `type` is its message's type, or empty, or absent (the same); nothing
///   the service fills in is required.
/// - A schema only ever sent by the bridge (an answer, an event) has its `type` fixed (a
///   one-value enum, which a discriminator can tell apart) and marks required every field the
///   bridge always writes: all but the nullable ones (`Option`s, left out when `None`). The
///   schemathesis run (scripts/fuzz-api.sh) checks every answer against these schemas.
/// - A schema both sent and received (a server config, a root) stays as a request's.
fn pin_message_types(doc: &mut utoipa::openapi::OpenApi) {
    use utoipa::openapi::{RefOr, Schema};
    let mut sent = Vec::new();
    let mut received = Vec::new();
    for item in doc.paths.paths.values_mut() {
        for operation in operations(item) {
            received.push(serde_json::to_value(&operation.request_body).unwrap_or_default());
            // The error answers are references to `components.responses`, each an `ErrorBody`,
            // which marks its fields already.
            sent.push(serde_json::to_value(&operation.responses).unwrap_or_default());
        }
    }
    let received = reachable_schemas(doc, &received);
    let sent = reachable_schemas(doc, &sent);
    let Some(components) = doc.components.as_mut() else {
        return;
    };
    for (name, schema) in components.schemas.iter_mut() {
        let RefOr::T(Schema::Object(object)) = schema else {
            continue;
        };
        let message_type = match object.properties.get("type") {
            Some(RefOr::T(Schema::Object(kind))) => match &kind.default {
                Some(default @ serde_json::Value::String(_)) => Some(default.clone()),
                _ => None,
            },
            _ => None,
        };
        if received.contains(name) {
            // `null` for an optional field of a request means the same as leaving it out
            // (`a2e::drop_nulls`): the document says so, field by field.
            for property in object.properties.values_mut() {
                match property {
                    RefOr::T(Schema::Object(property)) => allow_null(property),
                    RefOr::T(Schema::Array(list)) => {
                        use utoipa::openapi::schema::{SchemaType, Type};
                        list.schema_type = SchemaType::Array(vec![Type::Array, Type::Null]);
                    }
                    _ => {}
                }
            }
            if let Some(message_type) = message_type
                && let Some(RefOr::T(Schema::Object(kind))) = object.properties.get_mut("type")
            {
                // `null`, as for every optional field of a request, is the same as absent.
                kind.enum_values = Some(vec![
                    message_type,
                    serde_json::Value::from(""),
                    serde_json::Value::Null,
                ]);
            }
        } else if sent.contains(name) {
            if let Some(message_type) = message_type
                && let Some(RefOr::T(Schema::Object(kind))) = object.properties.get_mut("type")
            {
                kind.enum_values = Some(vec![message_type]);
            }
            object.required = object
                .properties
                .iter()
                .filter(|(_, property)| !nullable(property))
                .map(|(name, _)| name.clone())
                .collect();
        }
    }
}

/// Lets a property of one scalar type be `null` too (lists are made nullable by the caller;
/// objects keep their one type: the client generators cannot take a nullable one).
fn allow_null(property: &mut utoipa::openapi::schema::Object) {
    use utoipa::openapi::schema::{SchemaType, Type};
    if let SchemaType::Type(t) = &property.schema_type
        && matches!(
            t,
            Type::String | Type::Integer | Type::Number | Type::Boolean
        )
    {
        property.schema_type = SchemaType::Array(vec![t.clone(), Type::Null]);
    }
}

/// Whether a property's schema allows `null` (an `Option`).
fn nullable(schema: &utoipa::openapi::RefOr<utoipa::openapi::Schema>) -> bool {
    use utoipa::openapi::schema::{SchemaType, Type};
    use utoipa::openapi::{RefOr, Schema};
    match schema {
        RefOr::T(Schema::Object(object)) => match &object.schema_type {
            SchemaType::Array(types) => types.contains(&Type::Null),
            SchemaType::Type(t) => *t == Type::Null,
            SchemaType::AnyValue => true,
        },
        RefOr::T(Schema::OneOf(one_of)) => one_of.items.iter().any(nullable),
        RefOr::T(Schema::Array(array)) => {
            matches!(&array.schema_type, SchemaType::Array(types) if types.contains(&Type::Null))
        }
        _ => false,
    }
}

/// Every `/v1` operation may answer what the layer in front of them answers
/// ([`responses::AdmissionErrors`]: no valid token, a limit reached).
fn answer_admission(doc: &mut utoipa::openapi::OpenApi) {
    use utoipa::IntoResponses;
    for (path, item) in doc.paths.paths.iter_mut() {
        if !path.starts_with("/v1") {
            continue;
        }
        for operation in operations(item) {
            operation
                .responses
                .responses
                .extend(responses::AdmissionErrors::responses());
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
    // Few layers, each added once: axum boxes every `layer` call around every route, and clones
    // each box and boxes a future per request.
    let v1 = v1.route_layer(middleware::from_fn_with_state(state.clone(), admit));
    let mcp = crate::mcp_server::router(state.clone());
    Router::new()
        .merge(v1)
        .merge(mcp)
        .merge(public)
        .merge(discovery::router())
        .merge(console::router())
        .merge(SwaggerUi::new("/docs").url("/openapi.json", doc))
        .fallback(not_found)
        .layer(
            ServiceBuilder::new()
                .layer(ObserveLayer::new(state.metrics.clone()))
                .layer(DefaultBodyLimit::max(state.config.max_body_bytes)),
        )
        .with_state(state)
}

/// Middleware of every `/v1` route: a valid bearer token or 401 (the [`Caller`] goes into the
/// request's extensions), then the caller's limits.
///
/// [`Caller`]: crate::caller::Caller
async fn admit(
    axum::extract::State(state): axum::extract::State<AppState>,
    mut req: axum::extract::Request,
    next: middleware::Next,
) -> axum::response::Response {
    match state.auth.caller_of(req.headers(), req.uri()).await {
        Ok(agent) => {
            // Kept for the servers that carry each agent's identity upstream.
            let token = crate::http::auth::bearer(req.headers());
            state.registry.identities().saw(&agent, token);
            req.extensions_mut().insert(agent);
            crate::http::limits::admitted(&state.limits, req, |req| next.run(req)).await
        }
        Err(refused) => keep_alive_after(*refused, req).await,
    }
}

async fn not_found() -> ApiError {
    ApiError::new(ErrorCode::NotFound, "no such route")
}
