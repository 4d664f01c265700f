//! A2A 1.0's HTTP+JSON (REST) binding: the operations the bridge makes as JSON-RPC methods
//! (`SendMessage`, `GetTask`, …) as the binding's requests (`POST /message:send`,
//! `GET /tasks/{id}`, …), and its errors (`google.rpc.Status` bodies) read.

use reqwest::Method;
use serde_json::{Map, Value};

use super::A2aError;

/// One operation as an HTTP+JSON request.
#[derive(Debug, PartialEq)]
pub struct Request {
    pub method: Method,
    /// The path segments under the endpoint URL (each percent-encoded when the URL is built).
    pub segments: Vec<String>,
    /// Query parameters (for the `GET` operations).
    pub query: Vec<(String, String)>,
    /// The JSON body (for the `POST` operations).
    pub body: Option<Value>,
}

/// The text of a scalar parameter, as a path segment or a query value.
fn scalar(value: &Value) -> Option<String> {
    match value {
        Value::String(s) => Some(s.clone()),
        Value::Number(n) => Some(n.to_string()),
        Value::Bool(b) => Some(b.to_string()),
        _ => None,
    }
}

/// The params without the fields that went into the path.
fn rest_of(params: &Map<String, Value>, taken: &[&str]) -> Map<String, Value> {
    params
        .iter()
        .filter(|(k, _)| !taken.contains(&k.as_str()))
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect()
}

/// Scalar params (and arrays of them, repeated) as query parameters.
fn query_of(params: &Map<String, Value>) -> Vec<(String, String)> {
    let mut query = Vec::new();
    for (name, value) in params {
        match value {
            Value::Array(items) => {
                query.extend(items.iter().filter_map(scalar).map(|v| (name.clone(), v)));
            }
            other => query.extend(scalar(other).map(|v| (name.clone(), v))),
        }
    }
    query
}

/// The request for the A2A 1.0 method `method` with `params` (as JSON-RPC would send them).
pub fn request(method: &str, params: &Value) -> Result<Request, A2aError> {
    let empty = Map::new();
    let params = params.as_object().unwrap_or(&empty);
    let field = |name: &str| params.get(name).and_then(scalar);
    let required = |name: &str| {
        field(name).ok_or_else(|| A2aError::Invalid(format!("{method} needs params.{name}")))
    };
    let post = |segments: Vec<String>, body: Map<String, Value>| Request {
        method: Method::POST,
        segments,
        query: Vec::new(),
        body: Some(Value::Object(body)),
    };
    let read = |method: Method, segments: Vec<String>, query: Vec<(String, String)>| Request {
        method,
        segments,
        query,
        body: None,
    };
    let tasks = |rest: Vec<String>| [vec!["tasks".to_owned()], rest].concat();
    Ok(match method {
        "SendMessage" => post(vec!["message:send".into()], params.clone()),
        "SendStreamingMessage" => post(vec!["message:stream".into()], params.clone()),
        "GetTask" => {
            let id = required("id")?;
            read(
                Method::GET,
                tasks(vec![id]),
                query_of(&rest_of(params, &["id"])),
            )
        }
        "CancelTask" => {
            let id = required("id")?;
            post(
                tasks(vec![format!("{id}:cancel")]),
                rest_of(params, &["id"]),
            )
        }
        "SubscribeToTask" => {
            let id = required("id")?;
            post(
                tasks(vec![format!("{id}:subscribe")]),
                rest_of(params, &["id"]),
            )
        }
        "ListTasks" => read(Method::GET, tasks(Vec::new()), query_of(params)),
        "CreateTaskPushNotificationConfig" => {
            let task = required("taskId")?;
            post(
                tasks(vec![task, "pushNotificationConfigs".into()]),
                rest_of(params, &["taskId"]),
            )
        }
        "ListTaskPushNotificationConfigs" => {
            let task = required("taskId")?;
            read(
                Method::GET,
                tasks(vec![task, "pushNotificationConfigs".into()]),
                query_of(&rest_of(params, &["taskId"])),
            )
        }
        "GetTaskPushNotificationConfig" | "DeleteTaskPushNotificationConfig" => {
            let (task, id) = (required("taskId")?, required("id")?);
            let verb = match method {
                "GetTaskPushNotificationConfig" => Method::GET,
                _ => Method::DELETE,
            };
            read(
                verb,
                tasks(vec![task, "pushNotificationConfigs".into(), id]),
                Vec::new(),
            )
        }
        "GetExtendedAgentCard" => read(Method::GET, vec!["extendedAgentCard".into()], Vec::new()),
        other => {
            return Err(A2aError::Invalid(format!(
                "method \"{other}\" has no A2A 1.0 HTTP+JSON form, and the agent offers only HTTP+JSON"
            )));
        }
    })
}

/// The `google.rpc.Status` of an HTTP+JSON error body (`{"error": {code, status, message,
/// details}}`), when it is one.
pub fn status_of(body: &Value) -> Option<Value> {
    let error = body.get("error")?;
    (error.is_object() && (error.get("status").is_some() || error.get("code").is_some()))
        .then(|| error.clone())
}

/// The A2A reason of a `google.rpc.Status` (`TASK_NOT_FOUND`, …): its `ErrorInfo` detail's.
pub fn reason(status: &Value) -> Option<&str> {
    status
        .get("details")?
        .as_array()?
        .iter()
        .filter(|d| {
            d.get("@type")
                .and_then(Value::as_str)
                .is_some_and(|t| t.ends_with("google.rpc.ErrorInfo"))
        })
        .find_map(|d| d.get("reason").and_then(Value::as_str))
}

/// A `google.rpc.Status` in words: its status, HTTP code, reason and message.
pub fn describe(status: &Value) -> String {
    let text = |name| status.get(name).and_then(Value::as_str);
    let mut words = format!(
        "the agent answered {}",
        text("status").unwrap_or("an error")
    );
    if let Some(code) = status.get("code").and_then(Value::as_u64) {
        words.push_str(&format!(" (HTTP {code}"));
        if let Some(reason) = reason(status) {
            words.push_str(&format!(", {reason}"));
        }
        words.push(')');
    }
    if let Some(message) = text("message").filter(|m| !m.is_empty()) {
        words.push_str(&format!(": {message}"));
    }
    words
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn operations_map_to_their_paths() {
        let send = request("SendMessage", &json!({"message": {"messageId": "m"}})).unwrap();
        assert_eq!(send.method, Method::POST);
        assert_eq!(send.segments, ["message:send"]);
        assert_eq!(send.body, Some(json!({"message": {"messageId": "m"}})));
        let get = request("GetTask", &json!({"id": "t/1", "historyLength": 2})).unwrap();
        assert_eq!(
            (get.method, get.segments, get.query),
            (
                Method::GET,
                vec!["tasks".to_owned(), "t/1".to_owned()],
                vec![("historyLength".to_owned(), "2".to_owned())]
            )
        );
        let cancel = request("CancelTask", &json!({"id": "t"})).unwrap();
        assert_eq!(cancel.segments, ["tasks", "t:cancel"]);
        assert_eq!(cancel.body, Some(json!({})));
        let delete = request(
            "DeleteTaskPushNotificationConfig",
            &json!({"taskId": "t", "id": "p"}),
        )
        .unwrap();
        assert_eq!(delete.method, Method::DELETE);
        assert_eq!(
            delete.segments,
            ["tasks", "t", "pushNotificationConfigs", "p"]
        );
        assert!(request("GetTask", &json!({})).is_err());
        assert!(request("custom/thing", &json!({})).is_err());
    }

    #[test]
    fn status_errors_are_read() {
        let body = json!({"error": {"code": 404, "status": "NOT_FOUND", "message": "Task not found",
            "details": [{"@type": "type.googleapis.com/google.rpc.ErrorInfo", "reason": "TASK_NOT_FOUND",
                "domain": "a2a-protocol.org"}]}});
        let status = status_of(&body).unwrap();
        assert_eq!(reason(&status), Some("TASK_NOT_FOUND"));
        assert_eq!(
            describe(&status),
            "the agent answered NOT_FOUND (HTTP 404, TASK_NOT_FOUND): Task not found"
        );
        assert!(status_of(&json!({"task": {}})).is_none());
    }
}
