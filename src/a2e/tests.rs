//! Parses the seed's wire examples and round-trips every message.

use serde_json::{Value, json};

use super::*;

const REGISTER_REQ: &str = r#"{"type":"mcp/server/register/req","id":"r1s2t3","version":"1.0","ts":1716123456.789,"config":{"server_id":"fs","name":"filesystem","transport":"stdio","cmd":["npx","-y","@modelcontextprotocol/server-filesystem","/tmp"],"cwd":"","env":{},"url":"","headers":{},"timeout":300,"auto_reconnect":true,"tool_allow_list":[],"resource_allow_list":[]}}"#;
const REGISTER_RESP: &str = r#"{"type":"mcp/server/register/resp","id":"u4v5w6","version":"1.0","ts":1716123457.200,"req_id":"r1s2t3","ok":true,"server":{"server_id":"fs","name":"filesystem","transport":"stdio","status":"ready","tools_count":5,"resources_count":0,"prompts_count":0},"error":""}"#;
const RESOURCE_LIST_REQ: &str = r#"{"type":"mcp/resource/list/req","id":"x7y8z9","version":"1.0","ts":1716123458.100,"server_id":"","cursor":""}"#;
const PROMPT_GET_REQ: &str = r#"{"type":"mcp/prompt/get/req","id":"a0b1c2","version":"1.0","ts":1716123459.100,"name":"code_review","arguments":{"language":"python"},"server_id":"reviewer"}"#;

/// Every field of `sent` appears in `back` with the same value.
fn assert_contains(sent: &Value, back: &Value) {
    for (key, value) in sent.as_object().expect("an object") {
        match value {
            Value::Object(_) => assert_contains(value, &back[key]),
            _ => assert_eq!(&back[key], value, "field `{key}`"),
        }
    }
}

fn round_trip<M>(wire: &str) -> M
where
    M: Message + serde::Serialize + serde::de::DeserializeOwned + PartialEq + std::fmt::Debug,
{
    let msg: M = serde_json::from_str(wire).expect("parses");
    msg.check_type().expect("right type");
    let back = serde_json::to_value(&msg).unwrap();
    assert_contains(&serde_json::from_str(wire).unwrap(), &back);
    let again: M = serde_json::from_value(back).unwrap();
    assert_eq!(again, msg);
    msg
}

#[test]
fn seed_register_request() {
    let msg: ServerRegisterRequest = round_trip(REGISTER_REQ);
    assert_eq!(msg.id, "r1s2t3");
    assert_eq!(msg.ts, 1716123456.789);
    assert_eq!(msg.config.server_id, "fs");
    assert_eq!(msg.config.transport, McpTransport::Stdio);
    assert_eq!(msg.config.cmd.len(), 4);
    assert!(msg.config.auto_reconnect);
}

#[test]
fn seed_register_response() {
    let msg: ServerRegisterResponse = round_trip(REGISTER_RESP);
    assert_eq!(msg.req_id, "r1s2t3");
    let server = msg.server.expect("server");
    assert_eq!(server.status, McpServerStatus::Ready);
    assert_eq!(server.tools_count, 5);
    // Fields the example leaves out take their defaults.
    assert_eq!(server.mcp_version, "");
}

#[test]
fn seed_resource_list_and_prompt_get() {
    let list: ResourceListRequest = round_trip(RESOURCE_LIST_REQ);
    assert_eq!(list.id, "x7y8z9");
    let get: PromptGetRequest = round_trip(PROMPT_GET_REQ);
    assert_eq!(get.name, "code_review");
    assert_eq!(get.arguments["language"], "python");
    assert_eq!(get.server_id, "reviewer");
}

#[test]
fn absent_envelope_fields_are_filled_in() {
    let msg: ServerListRequest = serde_json::from_str("{}").unwrap();
    assert_eq!(msg.kind, "mcp/server/list/req");
    assert_eq!(msg.version, "1.0");
    assert!(uuid::Uuid::parse_str(&msg.id).is_ok());
    assert!(msg.ts > 1.7e9);
    assert_eq!(msg.status_filter, None);
}

#[test]
fn a_foreign_type_is_refused() {
    let msg: ServerListRequest =
        serde_json::from_value(json!({"type": "mcp/prompt/list/req"})).unwrap();
    assert!(
        msg.check_type()
            .unwrap_err()
            .contains("mcp/server/list/req")
    );
}

#[test]
fn seed_defaults_of_sampling_messages() {
    let req: SamplingRequest = serde_json::from_str("{}").unwrap();
    assert_eq!(req.include_context, "none");
    assert_eq!(req.temperature, 1.0);
    assert_eq!(req.max_tokens, 1024);
    let resp: SamplingResponse = serde_json::from_str("{}").unwrap();
    assert_eq!(resp.role, Role::Assistant);
    assert_eq!(resp.content, json!({}));
}

#[test]
fn config_defaults_and_unknown_transport() {
    let config: McpServerConfig = serde_json::from_str("{}").unwrap();
    assert_eq!(config.timeout, 300);
    assert_eq!(config.connect_timeout, 30);
    assert!(config.auto_reconnect);
    assert_eq!(config.transport, McpTransport::Stdio);
    assert!(
        serde_json::from_value::<McpServerConfig>(json!({"transport": "carrier-pigeon"})).is_err()
    );
}

#[test]
fn redaction_hides_every_secret_value() {
    let config: McpServerConfig = serde_json::from_value(json!({
        "env": {"API_KEY": "s3cret"}, "headers": {"Authorization": "Bearer t0ken"}
    }))
    .unwrap();
    let shown = serde_json::to_string(&config.redacted()).unwrap();
    assert!(!shown.contains("s3cret") && !shown.contains("t0ken"));
    assert!(shown.contains(r#""API_KEY":"***""#));
    assert_eq!(
        redact_url("https://u:pw@h/mcp?api_key=k&x=1"),
        "https://u:***@h/mcp?api_key=***&x=***"
    );
    assert_eq!(
        redact_url("http://127.0.0.1:3000/mcp"),
        "http://127.0.0.1:3000/mcp"
    );
}

/// Every message type, each built from `{}` and round-tripped: 21 of the seed plus the others.
#[test]
fn every_message_round_trips() {
    fn check<M>() -> &'static str
    where
        M: Message + serde::Serialize + serde::de::DeserializeOwned + PartialEq + std::fmt::Debug,
    {
        let msg: M = serde_json::from_str("{}").unwrap();
        assert_eq!(msg.kind(), M::TYPE);
        let again: M = serde_json::from_value(serde_json::to_value(&msg).unwrap()).unwrap();
        assert_eq!(again, msg);
        M::TYPE
    }
    let seed = [
        check::<ServerListRequest>(),
        check::<ServerListResponse>(),
        check::<ServerRegisterRequest>(),
        check::<ServerRegisterResponse>(),
        check::<ServerUnregisterRequest>(),
        check::<ServerUnregisterResponse>(),
        check::<ServerPush>(),
        check::<ResourceListRequest>(),
        check::<ResourceListResponse>(),
        check::<ResourceReadRequest>(),
        check::<ResourceReadResponse>(),
        check::<ResourceSubscribeRequest>(),
        check::<ResourceSubscribeResponse>(),
        check::<PromptListRequest>(),
        check::<PromptListResponse>(),
        check::<PromptGetRequest>(),
        check::<PromptGetResponse>(),
        check::<SamplingRequest>(),
        check::<SamplingResponse>(),
        check::<RootsListRequest>(),
        check::<RootsListResponse>(),
    ];
    assert_eq!(seed.len(), 21);
    assert!(seed.iter().all(|t| t.starts_with("mcp/")));
    let unique: std::collections::HashSet<_> = seed.iter().collect();
    assert_eq!(unique.len(), 21);
    for extra in [
        check::<ServerGetRequest>(),
        check::<ServerGetResponse>(),
        check::<ServerUpdateRequest>(),
        check::<ServerUpdateResponse>(),
        check::<ServerReconnectRequest>(),
        check::<ServerReconnectResponse>(),
        check::<ToolListRequest>(),
        check::<ToolListResponse>(),
        check::<ToolCallRequest>(),
        check::<ToolCallResponse>(),
        check::<ToolApproveRequest>(),
        check::<ToolApproveResponse>(),
        check::<ToolCallCancelRequest>(),
        check::<ToolCallCancelResponse>(),
    ] {
        assert!(!seed.contains(&extra));
    }
}

#[test]
fn error_codes_say_whether_to_retry() {
    assert!(ErrorCode::McpServerUnavailable.retryable());
    assert!(ErrorCode::McpTransportError.retryable());
    assert!(!ErrorCode::McpProtocolError.retryable());
    assert!(!ErrorCode::Cancelled.retryable());
    assert!(!ErrorCode::McpSamplingRefused.retryable());
    assert_eq!(
        serde_json::to_value(ErrorCode::McpCapabilityMissing).unwrap(),
        json!("mcp_capability_missing")
    );
    assert!(!ErrorCode::McpAuthRequired.retryable());
    assert_eq!(
        serde_json::to_value(ErrorCode::McpAuthRequired).unwrap(),
        json!(ErrorCode::McpAuthRequired.as_str())
    );
    assert_eq!(ErrorCode::McpAuthRequired.as_str(), "mcp_auth_required");
}

#[test]
fn every_status_reads_and_writes_its_own_string() {
    for status in McpServerStatus::ALL {
        assert_eq!(
            serde_json::to_value(status).unwrap(),
            json!(status.as_str())
        );
        let back: McpServerStatus = serde_json::from_value(json!(status.as_str())).unwrap();
        assert_eq!(back, status);
    }
    assert_eq!(McpServerStatus::AuthRequired.as_str(), "auth_required");
    let list: ServerListRequest =
        serde_json::from_value(json!({"status_filter": "auth_required"})).unwrap();
    assert_eq!(list.status_filter, Some(McpServerStatus::AuthRequired));
}

const PEM: &str = "-----BEGIN PRIVATE KEY-----\nMIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQg\n-----END PRIVATE KEY-----\n";

fn oauth_config() -> McpServerConfig {
    serde_json::from_value(json!({
        "server_id": "hosted", "transport": "http", "url": "https://mcp.example.com/mcp",
        "auth": {
            "type": "oauth2", "grant_type": "client_credentials", "client_id": "bridge",
            "client_secret": "cl13nt-s3cret", "scopes": ["mcp:tools"],
            "token_endpoint_auth_method": "private_key_jwt", "private_key": PEM
        }
    }))
    .unwrap()
}

#[test]
fn oauth_settings_read_with_their_defaults() {
    let config: McpServerConfig = serde_json::from_value(json!({
        "transport": "http", "auth": {"type": "oauth2"}
    }))
    .unwrap();
    let auth = config.auth.clone().unwrap();
    assert_eq!(auth.kind, OAuthKind::OAuth2);
    assert_eq!(auth.grant_type, OAuthGrant::AuthorizationCode);
    assert!(auth.client_id.is_none() && auth.scopes.is_empty() && !auth.per_agent);
    // Unset optional fields are left out, and a config without `auth` has none.
    assert_eq!(
        serde_json::to_value(&auth).unwrap(),
        json!({"type": "oauth2", "grant_type": "authorization_code", "per_agent": false})
    );
    let plain = serde_json::to_value(McpServerConfig::default()).unwrap();
    assert!(plain.get("auth").is_none(), "{plain}");
    for bad in [
        json!({"auth": {}}),
        json!({"auth": {"type": "basic"}}),
        json!({"auth": {"type": "oauth2", "grant_type": "password"}}),
        json!({"auth": {"type": "oauth2", "token_endpoint_auth_method": "tls_client_auth"}}),
    ] {
        assert!(
            serde_json::from_value::<McpServerConfig>(bad.clone()).is_err(),
            "{bad}"
        );
    }
    let config = oauth_config();
    let again: McpServerConfig =
        serde_json::from_value(serde_json::to_value(&config).unwrap()).unwrap();
    assert_eq!(again, config);
    let auth = config.auth.unwrap();
    assert_eq!(auth.grant_type, OAuthGrant::ClientCredentials);
    assert_eq!(
        auth.token_endpoint_auth_method,
        Some(TokenEndpointAuth::PrivateKeyJwt)
    );
}

#[test]
fn oauth_secrets_are_redacted_and_hidden_from_text() {
    let config = oauth_config();
    let shown = config.redacted();
    let auth = shown.auth.as_ref().unwrap();
    assert_eq!(auth.client_secret.as_deref(), Some(REDACTED));
    assert_eq!(auth.private_key.as_deref(), Some(REDACTED));
    assert_eq!(auth.client_id.as_deref(), Some("bridge"));
    let json = serde_json::to_string(&shown).unwrap();
    assert!(
        !json.contains("cl13nt-s3cret") && !json.contains("PRIVATE KEY"),
        "{json}"
    );
    // Nor in a printed config.
    let printed = format!("{config:?}");
    assert!(
        !printed.contains("cl13nt-s3cret") && !printed.contains("MIGHAgEA"),
        "{printed}"
    );
    // Unset secrets stay unset.
    let bare = OAuthConfig::default().redacted();
    assert!(bare.client_secret.is_none() && bare.private_key.is_none());

    let secrets = config.secret_values();
    assert!(secrets.contains(&"cl13nt-s3cret".to_owned()));
    assert!(secrets.contains(&PEM.to_owned()));
    let text = "token endpoint said: bad secret cl13nt-s3cret for key \
                MIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQg";
    assert_eq!(
        config.redact_text(text),
        "token endpoint said: bad secret *** for key ***"
    );
}

#[test]
fn oauth_secrets_sent_back_as_shown_are_kept() {
    let stored = oauth_config().auth.unwrap();
    let shown = stored.redacted();
    assert_eq!(shown.clone().keeping_secrets(Some(&stored)), stored);
    // A new value replaces the stored one; with nothing stored, `***` is taken as given.
    let mut changed = shown.clone();
    changed.client_secret = Some("n3w-s3cret".into());
    let kept = changed.keeping_secrets(Some(&stored));
    assert_eq!(kept.client_secret.as_deref(), Some("n3w-s3cret"));
    assert_eq!(kept.private_key, stored.private_key);
    assert_eq!(shown.clone().keeping_secrets(None), shown);
}

#[test]
fn an_update_sets_or_removes_auth() {
    let read = |v: Value| serde_json::from_value::<ServerUpdateRequest>(v).unwrap();
    assert_eq!(read(json!({"server_id": "s"})).auth, Patch::Absent);
    assert_eq!(
        read(json!({"server_id": "s", "auth": null})).auth,
        Patch::Null
    );
    let set = read(json!({"server_id": "s", "auth": {"type": "oauth2", "per_agent": true}}));
    assert!(matches!(&set.auth, Patch::Value(auth) if auth.per_agent));
    let again: ServerUpdateRequest =
        serde_json::from_value(serde_json::to_value(&set).unwrap()).unwrap();
    assert_eq!(again, set);
}

#[test]
fn error_text_is_redacted_like_a_config() {
    let config: McpServerConfig = serde_json::from_value(json!({
        "url": "http://u:pa%24s@h:1/mcp?api_key=k3y-value",
        "env": {"API_KEY": "sk-live-123", "DEBUG": "1"},
        "headers": {"Authorization": "Bearer t0ken-abc"},
        "cmd": ["run", "postgresql://app:S3cretPW@db/prod"]
    }))
    .unwrap();
    let text = "error sending request for url (http://u:pa%24s@h:1/mcp?api_key=k3y-value): \
                key sk-live-123 token t0ken-abc db S3cretPW pa$s 1";
    let shown = config.redact_text(text);
    assert_eq!(
        shown,
        "error sending request for url (http://u:***@h:1/mcp?api_key=***): \
         key *** token *** db *** *** 1"
    );
    assert_eq!(
        config.redacted().cmd,
        ["run", "postgresql://app:***@db/prod"]
    );
    assert_eq!(redact_text("no secrets here", &[]), "no secrets here");
}
