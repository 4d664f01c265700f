//! A session's requests besides its POSTs, over the [`Pool`] and answered as rmcp's reqwest
//! client answers them (the same statuses and errors): the GET of an SSE stream (the server's
//! standalone stream, or a call's stream resumed after its last event), on a connection of its
//! own ([`Pool::stream`]), and the DELETE that ends the session. The events are cut as a POST's
//! are ([`Events`]): one over the limit that answers a request becomes the error answer for it,
//! any other is dropped with a warning, and the stream goes on.

use std::collections::HashMap;
use std::sync::Arc;

use axum::http::header::{ACCEPT, CONTENT_TYPE};
use axum::http::{HeaderName, HeaderValue, Method, StatusCode};
use bytes::Bytes;
use rmcp::transport::streamable_http_client::StreamableHttpError;

use super::Events as Stream;
use super::pooled::Pool;
use super::post::{
    self, EVENT_STREAM, Events, JSON, Result, challenge, media_type_is, status_error, unexpected,
};

const LAST_EVENT_ID: &str = "last-event-id";

/// What the session's requests go with.
pub struct Sent<'a> {
    pub pool: &'a Pool,
    pub uri: &'a str,
    pub session_id: Option<&'a str>,
    /// The access token.
    pub auth: Option<&'a str>,
    /// rmcp's: the configured headers and the protocol version.
    pub custom: &'a HashMap<HeaderName, HeaderValue>,
}

impl Sent<'_> {
    /// The SSE stream a GET opens, after the event `last_event_id` when given.
    pub async fn stream<E>(
        &self,
        last_event_id: Option<String>,
        limit: usize,
        server_id: &Arc<str>,
    ) -> Result<Stream, E>
    where
        E: std::error::Error + Send + Sync + 'static,
    {
        let mut headers = post::headers(self.custom, self.session_id, self.auth)?;
        headers.remove(CONTENT_TYPE);
        if let Some(id) = last_event_id {
            let value = HeaderValue::try_from(id)
                .map_err(|_| unexpected("the last event id is not a valid header value"))?;
            headers.insert(LAST_EVENT_ID, value);
        }
        let response = self.pool.stream(post::uri(self.uri)?, &headers).await?;
        let status = response.status();
        if status == StatusCode::METHOD_NOT_ALLOWED {
            return Err(StreamableHttpError::ServerDoesNotSupportSse);
        }
        if let Some(error) = challenge(status, response.headers())? {
            return Err(error);
        }
        if let Some(error) = status_error(status, response.headers()) {
            return Err(error.into());
        }
        if !status.is_success() {
            return Err(unexpected(format!("HTTP {status} for the stream's GET")));
        }
        match response.headers().get(CONTENT_TYPE).map(|ct| ct.to_str()) {
            Some(Ok(ct)) if media_type_is(ct, EVENT_STREAM) || media_type_is(ct, JSON) => {}
            Some(ct) => {
                let ct = ct.map_or_else(|_| "(not text)".to_owned(), str::to_owned);
                return Err(StreamableHttpError::UnexpectedContentType(Some(ct)));
            }
            None => return Err(StreamableHttpError::UnexpectedContentType(None)),
        }
        let events = Events::new(response.into_body(), limit, server_id.clone());
        Ok(events.into_stream(Vec::new()))
    }

    /// Ends the session; a server that does not let clients end sessions (405) keeps it.
    pub async fn delete<E>(&self) -> Result<(), E>
    where
        E: std::error::Error + Send + Sync + 'static,
    {
        let mut headers = post::headers(self.custom, self.session_id, self.auth)?;
        headers.remove(CONTENT_TYPE);
        headers.remove(ACCEPT);
        let uri = post::uri(self.uri)?;
        let response = (self.pool)
            .send(Method::DELETE, uri, &headers, Bytes::new())
            .await?;
        match response.status() {
            StatusCode::METHOD_NOT_ALLOWED => {
                tracing::debug!("this server doesn't support deleting session");
                Ok(())
            }
            status if status.is_success() => Ok(()),
            status => Err(unexpected(format!(
                "HTTP {status} for the session's DELETE"
            ))),
        }
    }
}
