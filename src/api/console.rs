//! The operator console: hand-written HTML, CSS and JavaScript modules from `console/`, embedded
//! in the binary and served at `/ui` (the page) and `/ui/{file}` (its assets). Public: the page
//! asks for a token and sends it, from session storage, on every request it makes to the REST
//! API. Like Swagger UI's routes, these are not part of the OpenAPI document.

use std::sync::LazyLock;

use axum::Router;
use axum::extract::Path;
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::get;

use crate::a2e::ErrorCode;
use crate::http::error::ApiError;
use crate::http::state::AppState;

/// Nothing inline, nothing from elsewhere: the page's data comes from upstream servers (tool
/// descriptions, results, prompts), so markup that slipped into the DOM still could not run.
/// Images and audio only as `data:` URLs, which the page builds from result blocks.
const CSP: &str = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; \
                   media-src data:; connect-src 'self'; form-action 'none'; base-uri 'none'; \
                   frame-ancestors 'none'";

struct Asset {
    name: &'static str,
    content_type: &'static str,
    body: &'static [u8],
}

macro_rules! asset {
    ($name:literal, $type:expr) => {
        Asset {
            name: $name,
            content_type: $type,
            body: include_bytes!(concat!(env!("CARGO_MANIFEST_DIR"), "/console/", $name)),
        }
    };
}

const JS: &str = "text/javascript; charset=utf-8";

/// Every file of `console/`; `index.html` is the page itself.
const ASSETS: &[Asset] = &[
    asset!("index.html", "text/html; charset=utf-8"),
    asset!("console.css", "text/css; charset=utf-8"),
    asset!("app.js", JS),
    asset!("api.js", JS),
    asset!("dom.js", JS),
    asset!("forms.js", JS),
    asset!("servers.js", JS),
    asset!("catalogue.js", JS),
    asset!("events.js", JS),
    asset!("requests.js", JS),
    asset!("approvals.js", JS),
    asset!("agents.js", JS),
    asset!("admin.js", JS),
];

/// Each asset's ETag: the start of the SHA-256 of its bytes, so a new build is fetched at once
/// and an unchanged one is a 304.
static ETAGS: LazyLock<Vec<String>> = LazyLock::new(|| {
    ASSETS
        .iter()
        .map(|asset| {
            let digest = ring::digest::digest(&ring::digest::SHA256, asset.body);
            format!("\"{}\"", hex::encode(&digest.as_ref()[..12]))
        })
        .collect()
});

pub fn router() -> Router<AppState> {
    Router::new()
        .route("/ui", get(page))
        .route("/ui/", get(page))
        .route("/ui/{file}", get(file))
}

async fn page(headers: HeaderMap) -> Response {
    serve(0, &headers)
}

async fn file(Path(name): Path<String>, headers: HeaderMap) -> Response {
    match ASSETS.iter().position(|asset| asset.name == name) {
        Some(index) => serve(index, &headers),
        None => ApiError::new(ErrorCode::NotFound, "no such file in the console").into_response(),
    }
}

/// One asset with the console's security headers; revalidated on every load (`no-cache`), which
/// its ETag makes a 304 when nothing changed.
fn serve(index: usize, request: &HeaderMap) -> Response {
    let asset = &ASSETS[index];
    let etag = &ETAGS[index];
    let fresh = request
        .get(header::IF_NONE_MATCH)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|tags| tags.split(',').any(|tag| tag.trim() == etag));
    let headers = [
        (
            header::CONTENT_SECURITY_POLICY,
            HeaderValue::from_static(CSP),
        ),
        (
            header::X_CONTENT_TYPE_OPTIONS,
            HeaderValue::from_static("nosniff"),
        ),
        (
            header::REFERRER_POLICY,
            HeaderValue::from_static("no-referrer"),
        ),
        (header::CACHE_CONTROL, HeaderValue::from_static("no-cache")),
        (
            header::ETAG,
            HeaderValue::from_str(etag).expect("hex is a valid header value"),
        ),
    ];
    if fresh {
        return (StatusCode::NOT_MODIFIED, headers).into_response();
    }
    let content_type = [(
        header::CONTENT_TYPE,
        HeaderValue::from_static(asset.content_type),
    )];
    (StatusCode::OK, headers, content_type, asset.body).into_response()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_module_the_page_imports_is_served() {
        let names: Vec<&str> = ASSETS.iter().map(|a| a.name).collect();
        for asset in ASSETS {
            let text = std::str::from_utf8(asset.body).unwrap();
            // `import … from "./x.js"` in modules, `src="/ui/x.js"` / `href="/ui/x.css"` in the page.
            for quoted in text.split('"').skip(1).step_by(2) {
                let target = quoted
                    .strip_prefix("./")
                    .or_else(|| quoted.strip_prefix("/ui/"));
                if let Some(target) = target.filter(|t| t.ends_with(".js") || t.ends_with(".css")) {
                    assert!(names.contains(&target), "{} refers to {target}", asset.name);
                }
            }
        }
    }

    /// Text from upstream servers must never be parsed as HTML or run as code: the modules build
    /// the DOM with createElement and textContent only.
    #[test]
    fn no_module_parses_html_or_evaluates_code() {
        for asset in ASSETS.iter().filter(|a| a.name.ends_with(".js")) {
            let text = std::str::from_utf8(asset.body).unwrap();
            for sink in [
                "innerHTML",
                "outerHTML",
                "insertAdjacentHTML",
                "document.write",
                "DOMParser",
                "createContextualFragment",
                "eval(",
                "new Function",
                "setAttribute(\"on",
            ] {
                assert!(!text.contains(sink), "{} uses {sink}", asset.name);
            }
        }
    }

    #[test]
    fn nothing_inline_in_the_page() {
        let page = std::str::from_utf8(ASSETS[0].body).unwrap();
        assert!(!page.contains("<style"), "no inline style element");
        assert!(!page.contains(" style="), "no style attribute");
        let handler = page.split(" on").skip(1).any(|rest| {
            let name: String = rest.chars().take_while(char::is_ascii_alphabetic).collect();
            !name.is_empty() && rest[name.len()..].starts_with('=')
        });
        assert!(!handler, "no event handler attribute");
        for script in page.split("<script").skip(1) {
            assert!(script.contains("src=\"/ui/"), "only scripts from /ui");
        }
    }
}
