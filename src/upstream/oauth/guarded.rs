//! Every request of an OAuth flow sent through the address guard, each redirect checked, and a
//! refused answer reduced to its OAuth error code (its words only logged, redacted).

use std::sync::Arc;
use std::time::Duration;

use rmcp::transport::auth::{
    AuthError, OAuthHttpClient, OAuthHttpClientError, OAuthHttpClientFuture,
    OAuthHttpRedirectPolicy, OAuthHttpRequest,
};

use super::{OAuthError, describe};
use crate::guard::Guard;

/// How long one request to an authorization server may take.
const HTTP_TIMEOUT: Duration = Duration::from_secs(30);
/// Redirects followed where the flow allows them (discovery), each one checked by the guard.
const MAX_REDIRECTS: usize = 5;

/// Every request rmcp's OAuth client makes, through clients of the address guard: names resolve
/// to allowed addresses only, literal addresses and each redirect are checked.
#[derive(Clone)]
pub(super) struct GuardedHttp {
    guard: Guard,
    follow: reqwest::Client,
    stop: reqwest::Client,
    /// What the last refused request was, in words (never the answer's body): what an error
    /// of the flow says.
    pub(super) failure: Arc<std::sync::Mutex<Option<String>>>,
    /// The `resource` (RFC 8707) exactly as the protected resource metadata published it, for
    /// token requests that would send it parsed (see `as_published`).
    pub(super) published: Option<String>,
}

impl GuardedHttp {
    pub(super) fn new(guard: Guard) -> Result<Self, OAuthError> {
        let build = |follow: bool| {
            let policy = reqwest::redirect::Policy::custom(move |attempt| {
                if !follow {
                    return attempt.stop();
                }
                if attempt.previous().len() > MAX_REDIRECTS {
                    return attempt.error(format!("more than {MAX_REDIRECTS} redirects"));
                }
                match guard.check_url(attempt.url()) {
                    Ok(()) => attempt.follow(),
                    Err(why) => attempt.error(why),
                }
            });
            guard
                .http_client(false)
                .redirect(policy)
                .timeout(HTTP_TIMEOUT)
                .build()
                .map_err(|e| OAuthError::Failed(format!("cannot make an HTTP client: {e}")))
        };
        Ok(Self {
            guard,
            follow: build(true)?,
            stop: build(false)?,
            failure: Arc::default(),
            published: None,
        })
    }
}

/// The most of an authorization server's answer read.
const MAX_ANSWER_BYTES: usize = 1024 * 1024;

impl GuardedHttp {
    /// Sends `request`, following redirects only with `follow`; the answer read whole. A failed
    /// answer's body is logged (at debug, redacted) and replaced by its OAuth error code alone:
    /// an authorization server's words (or a metadata service's answer) never reach an error
    /// that agents read.
    pub(super) async fn send(
        &self,
        request: oauth2::HttpRequest,
        follow: bool,
    ) -> Result<oauth2::HttpResponse, OAuthHttpClientError> {
        let client = if follow { &self.follow } else { &self.stop };
        let asked = what_is_asked(&request);
        self.failure
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .take();
        let request = as_published(with_client_id(request), self.published.as_deref());
        let request = reqwest::Request::try_from(request)?;
        // Literal addresses: the resolver of the client checks names, and each redirect is
        // checked by its policy; an IP literal reaches neither.
        if let Err(why) = self.guard.check_url(request.url()) {
            self.fail(format!("{asked} is refused: {why}"));
            return Err(why.into());
        }
        let url = crate::a2e::redact_url(request.url().as_str());
        let mut response = match client.execute(request).await {
            Ok(response) => response,
            Err(error) => {
                self.fail(format!(
                    "{asked} ({url}) was not reached: {}",
                    describe(&error)
                ));
                return Err(error.into());
            }
        };
        let status = response.status();
        let mut answer = oauth2::http::Response::builder().status(status);
        let failed = status.is_client_error() || status.is_server_error();
        for (name, value) in response.headers() {
            let about_body = name == reqwest::header::CONTENT_LENGTH
                || name == reqwest::header::CONTENT_ENCODING
                || name == reqwest::header::TRANSFER_ENCODING;
            if !(failed && about_body) {
                answer = answer.header(name, value);
            }
        }
        let mut body = Vec::new();
        while let Some(chunk) = response.chunk().await? {
            if body.len() + chunk.len() > MAX_ANSWER_BYTES {
                return Err(format!("an answer larger than {MAX_ANSWER_BYTES} bytes").into());
            }
            body.extend_from_slice(&chunk);
        }
        if failed {
            let code = oauth_error_code(&body);
            tracing::debug!(%url, %status, body = %redacted_body(&body), "an OAuth request failed");
            let code_words = code.as_deref().map(|c| format!(" {c}")).unwrap_or_default();
            self.fail(format!(
                "{asked} ({url}) answered {}{code_words}",
                status.as_u16()
            ));
            body = match code {
                Some(code) => serde_json::json!({ "error": code })
                    .to_string()
                    .into_bytes(),
                None => Vec::new(),
            };
        }
        Ok(answer.body(body)?)
    }

    fn fail(&self, what: String) {
        *self.failure.lock().unwrap_or_else(|e| e.into_inner()) = Some(what);
    }

    /// `error` of a step of the flow made over this client, in words: what the authorization
    /// server answered when it refused a request.
    pub(super) fn explain(&self, error: AuthError) -> OAuthError {
        let failure = self
            .failure
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .take();
        match (OAuthError::from(error), failure) {
            (OAuthError::NeedsAuthorization, _) => OAuthError::NeedsAuthorization,
            (_, Some(failure)) => OAuthError::Failed(failure),
            (other, None) => other,
        }
    }
}

/// What a request of the flow asks for, in words, for errors.
fn what_is_asked(request: &oauth2::HttpRequest) -> &'static str {
    if request.method() == oauth2::http::Method::GET {
        return "the authorization metadata request";
    }
    let form = url::form_urlencoded::parse(request.body());
    match form.into_iter().find(|(k, _)| k == "grant_type") {
        Some((_, grant)) if grant == "refresh_token" => "the token refresh",
        Some(_) => "the token endpoint",
        None => "the registration endpoint",
    }
}

/// The OAuth error code (RFC 6749 §5.2, RFC 7591 §3.2.2) of a failed answer, when it has one
/// that looks like a code: a short token of letters, digits and `_.-`.
fn oauth_error_code(body: &[u8]) -> Option<String> {
    let value: serde_json::Value = serde_json::from_slice(body).ok()?;
    let code = value.get("error")?.as_str()?;
    let plain = !code.is_empty()
        && code.len() <= 64
        && code
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"_.-".contains(&b));
    plain.then(|| code.to_owned())
}

/// A failed answer's body for the debug log: at most 512 characters, URLs' secrets hidden,
/// and in JSON the values of fields that may carry secrets.
fn redacted_body(body: &[u8]) -> String {
    let text = match serde_json::from_slice::<serde_json::Value>(body) {
        Ok(mut value) => {
            hide_secret_fields(&mut value);
            value.to_string()
        }
        Err(_) => String::from_utf8_lossy(body).into_owned(),
    };
    let text: String = text.chars().take(512).collect();
    crate::a2e::redact_text(&text, &[])
}

fn hide_secret_fields(value: &mut serde_json::Value) {
    const SECRET: &[&str] = &["token", "secret", "password", "code", "assertion", "key"];
    match value {
        serde_json::Value::Object(map) => {
            for (name, field) in map.iter_mut() {
                let name = name.to_ascii_lowercase();
                if SECRET.iter().any(|s| name.contains(s)) && !field.is_null() {
                    *field = serde_json::Value::String("***".into());
                } else {
                    hide_secret_fields(field);
                }
            }
        }
        serde_json::Value::Array(items) => items.iter_mut().for_each(hide_secret_fields),
        _ => {}
    }
}

/// A form request whose `resource` is `published` as a URL parser writes it (a pathless
/// identifier such as `https://mcp.example.com` gains a `/`), with `published` in its place.
/// rmcp keeps the published identifier for the requests of the flow that discovered it, but a
/// link finished later (on any replica) starts a manager from the identifier as a URL, so its
/// token request would not repeat the authorization request's `resource` to the letter, which
/// RFC 8707 and MCP ask for. Only that spelling is replaced: never another resource.
fn as_published(mut request: oauth2::HttpRequest, published: Option<&str>) -> oauth2::HttpRequest {
    let Some(published) = published else {
        return request;
    };
    let is_form = request
        .headers()
        .get(oauth2::http::header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.starts_with("application/x-www-form-urlencoded"));
    let parsed = url::Url::parse(published).map(String::from);
    let Ok(parsed) = parsed else {
        return request;
    };
    if !is_form || parsed == published {
        return request;
    }
    let pairs: Vec<(String, String)> = url::form_urlencoded::parse(request.body())
        .into_owned()
        .collect();
    if !pairs.iter().any(|(k, v)| k == "resource" && *v == parsed) {
        return request;
    }
    let mut form = url::form_urlencoded::Serializer::new(String::new());
    for (key, value) in &pairs {
        let value = match key == "resource" && *value == parsed {
            true => published,
            false => value.as_str(),
        };
        form.append_pair(key, value);
    }
    *request.body_mut() = form.finish().into_bytes();
    request
}

/// A token request authenticated with HTTP Basic, with the client's `client_id` in its body too.
/// The `oauth2` crate leaves it out there (RFC 6749 §4.1.3 asks for it only from clients that do
/// not authenticate), and authorization servers built on the Python MCP SDK refuse a request
/// without it; it is an identifier, not a second authentication, so others take it as well.
fn with_client_id(mut request: oauth2::HttpRequest) -> oauth2::HttpRequest {
    use base64::Engine;
    let header = |name| {
        request
            .headers()
            .get(name)
            .and_then(|v: &oauth2::http::HeaderValue| v.to_str().ok())
            .map(str::to_owned)
    };
    let form = header(oauth2::http::header::CONTENT_TYPE)
        .is_some_and(|v| v.starts_with("application/x-www-form-urlencoded"));
    let basic = header(oauth2::http::header::AUTHORIZATION)
        .and_then(|v| v.strip_prefix("Basic ").map(str::to_owned));
    let (true, Some(basic)) = (
        form && request.method() == oauth2::http::Method::POST,
        basic,
    ) else {
        return request;
    };
    if url::form_urlencoded::parse(request.body()).any(|(key, _)| key == "client_id") {
        return request;
    }
    let id = base64::engine::general_purpose::STANDARD
        .decode(basic.trim())
        .ok()
        .and_then(|pair| String::from_utf8(pair).ok())
        .and_then(|pair| pair.split_once(':').map(|(id, _)| id.to_owned()));
    // RFC 6749 §2.3.1: the id in the header is form-encoded.
    let Some(id) = id.and_then(|id| {
        url::form_urlencoded::parse(format!("id={id}").as_bytes())
            .next()
            .map(|(_, v)| v.into_owned())
    }) else {
        return request;
    };
    let pair = url::form_urlencoded::Serializer::new(String::new())
        .append_pair("client_id", &id)
        .finish();
    let body = request.body_mut();
    if !body.is_empty() {
        body.push(b'&');
    }
    body.extend_from_slice(pair.as_bytes());
    request
}

impl OAuthHttpClient for GuardedHttp {
    fn execute(&self, request: OAuthHttpRequest) -> OAuthHttpClientFuture<'_> {
        let follow = !matches!(request.redirect_policy, OAuthHttpRedirectPolicy::Stop);
        Box::pin(self.send(request.request, follow))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn token_request(authorization: Option<&str>, body: &str) -> oauth2::HttpRequest {
        let mut request = oauth2::http::Request::builder()
            .method(oauth2::http::Method::POST)
            .uri("https://as.example/token")
            .header(
                oauth2::http::header::CONTENT_TYPE,
                "application/x-www-form-urlencoded",
            );
        if let Some(value) = authorization {
            request = request.header(oauth2::http::header::AUTHORIZATION, value);
        }
        request.body(body.as_bytes().to_vec()).unwrap()
    }

    #[test]
    fn a_pathless_resource_goes_out_as_published() {
        let body = "grant_type=authorization_code&resource=http%3A%2F%2Flocalhost%3A3000%2F&code=c";
        let sent = |published| {
            String::from_utf8(as_published(token_request(None, body), published).into_body())
                .unwrap()
        };
        assert_eq!(
            sent(Some("http://localhost:3000")),
            "grant_type=authorization_code&resource=http%3A%2F%2Flocalhost%3A3000&code=c"
        );
        // Nothing published, or published with its path already: left alone.
        assert_eq!(sent(None), body);
        assert_eq!(sent(Some("http://localhost:3000/")), body);
        // Another resource is never replaced.
        assert_eq!(sent(Some("http://localhost:4000")), body);
    }

    #[test]
    fn a_basic_authenticated_token_request_names_its_client_in_the_body_too() {
        use base64::Engine;
        let basic = base64::engine::general_purpose::STANDARD.encode("my%20client:s3cret");
        let request = token_request(Some(&format!("Basic {basic}")), "grant_type=refresh_token");
        let body = String::from_utf8(with_client_id(request).into_body()).unwrap();
        assert_eq!(body, "grant_type=refresh_token&client_id=my+client");
        // Already named, or not Basic: left alone.
        let named = token_request(Some(&format!("Basic {basic}")), "client_id=x");
        assert_eq!(with_client_id(named).into_body(), b"client_id=x");
        let post = token_request(None, "client_id=x&client_secret=y");
        assert_eq!(
            with_client_id(post).into_body(),
            b"client_id=x&client_secret=y"
        );
    }
}
