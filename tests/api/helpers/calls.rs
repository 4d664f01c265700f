//! Typed calls on `TestApp` for the steps a test takes on its way to what it checks: each
//! expects success, fails the test with the route, status and body otherwise, and returns only
//! the part of the answer a test reads. A test that checks a refusal keeps the raw
//! `get`/`post` and its `(StatusCode, Value)`.
//!
//! They act as alice, the agent most tests are, and as the admin for server registrations; an
//! `_as` variant takes another token. Requests whose fields vary from test to test (a resource
//! with or without its server, a prompt with an id) take the REST body as it is.

use reqwest::{Method, StatusCode};
use serde_json::{Value, json};

use super::app::TestApp;

impl TestApp {
    /// `method path` as `token` with `body`, which must answer `expected`: the body.
    pub async fn expect(
        &self,
        expected: StatusCode,
        method: Method,
        path: &str,
        token: &str,
        body: Option<Value>,
    ) -> Value {
        let (status, answer) = self.send(method.clone(), path, Some(token), body).await;
        assert_eq!(status, expected, "{method} {path} answered {answer}");
        answer
    }

    async fn post_ok(&self, path: &str, body: Value) -> Value {
        self.expect(StatusCode::OK, Method::POST, path, &self.alice, Some(body))
            .await
    }

    /// The entries under `key` of `GET path` as `token`.
    async fn listed(&self, path: &str, token: &str, key: &str) -> Vec<Value> {
        let body = self
            .expect(StatusCode::OK, Method::GET, path, token, None)
            .await;
        match &body[key] {
            Value::Array(entries) => entries.clone(),
            _ => panic!("GET {path} has no {key} list: {body}"),
        }
    }

    /// Registers `config` as the admin: the registered server.
    pub async fn register_server(&self, config: Value) -> Value {
        self.register_server_as(&self.admin, config).await
    }

    /// Registers `config` as `token`, who then owns it: the registered server.
    pub async fn register_server_as(&self, token: &str, config: Value) -> Value {
        let body = json!({ "config": config });
        let answer = self
            .expect(
                StatusCode::CREATED,
                Method::POST,
                "/v1/servers",
                token,
                Some(body),
            )
            .await;
        answer["server"].clone()
    }

    /// Unregisters `server_id` as the admin.
    pub async fn unregister_server(&self, server_id: &str) {
        let path = format!("/v1/servers/{server_id}");
        self.expect(StatusCode::OK, Method::DELETE, &path, &self.admin, None)
            .await;
    }

    /// The tools alice is shown, `query` being empty or a query string (`?server_id=ev`).
    pub async fn list_tools(&self, query: &str) -> Vec<Value> {
        self.list_tools_as(&self.alice, query).await
    }

    /// The tools `token` is shown, `query` being empty or a query string.
    pub async fn list_tools_as(&self, token: &str, query: &str) -> Vec<Value> {
        self.listed(&format!("/v1/tools{query}"), token, "tools")
            .await
    }

    /// Calls `name` as alice: the tool's result.
    pub async fn call_tool(&self, name: &str, arguments: Value) -> Value {
        self.call_tool_as(&self.alice, name, arguments).await
    }

    /// Calls `name` as `token`: the tool's result.
    pub async fn call_tool_as(&self, token: &str, name: &str, arguments: Value) -> Value {
        let body = json!({ "name": name, "arguments": arguments });
        self.expect(
            StatusCode::OK,
            Method::POST,
            "/v1/tools/call",
            token,
            Some(body),
        )
        .await
    }

    /// The resources alice is shown, `query` being empty or a query string.
    pub async fn list_resources(&self, query: &str) -> Vec<Value> {
        self.list_resources_as(&self.alice, query).await
    }

    /// The resources `token` is shown, `query` being empty or a query string.
    pub async fn list_resources_as(&self, token: &str, query: &str) -> Vec<Value> {
        self.listed(&format!("/v1/resources{query}"), token, "resources")
            .await
    }

    /// `POST /v1/resources/read` of `request` (`{"uri": ..}`, with `server_id` or not).
    pub async fn read_resource(&self, request: Value) -> Value {
        self.post_ok("/v1/resources/read", request).await
    }

    /// Subscribes alice to the resource `request` names.
    pub async fn subscribe(&self, request: Value) -> Value {
        self.post_ok("/v1/resources/subscribe", request).await
    }

    /// Ends alice's subscription to the resource `request` names.
    pub async fn unsubscribe(&self, request: Value) -> Value {
        self.post_ok("/v1/resources/unsubscribe", request).await
    }

    /// `POST /v1/prompts/get` of `request` (`{"name": .., "arguments": ..}`).
    pub async fn get_prompt(&self, request: Value) -> Value {
        self.post_ok("/v1/prompts/get", request).await
    }
}
