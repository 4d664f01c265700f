//! Replicas: real `mcp-bridge` processes sharing one PostgreSQL database and one NATS (each test
//! its own database and subject prefix). Here, what is shared between replicas: a server
//! registered on one is held by it and called, read and prompted through the others; a sampling
//! request reaches its agent's stream on a third replica; a policy, a quarantine, a cancellation
//! and an OAuth callback made on one are in force on the one that holds the server. Taking over
//! from a replica that dies or stops is in `takeover`, servers spread over replicas in `spread`,
//! outages of NATS and PostgreSQL in `outages`. Skipped unless `MCP_BRIDGE_TEST_POSTGRES` and
//! `MCP_BRIDGE_TEST_NATS` are set (scripts/test.sh sets both).

use std::time::{Duration, Instant};

use reqwest::StatusCode;
use serde_json::{Value, json};

use crate::cluster::*;
use crate::helpers::*;

mod outages;
mod spread;
mod takeover;

fn echo(result: &Value) -> &str {
    result["content"][0]["text"].as_str().unwrap_or("")
}

#[tokio::test]
async fn a_server_registered_on_one_replica_is_called_through_another() {
    let Some(mut replicas) = Replicas::new().await else {
        return;
    };
    let a = replicas.start("a").await;
    let b = replicas.start("b").await;
    let http = everything_http().await;
    let stdio = unique("rs");
    let remote = unique("rh");
    a.app.register_server(everything_stdio(&stdio)).await;
    let (status, body) = a
        .app
        .post(
            "/v1/servers",
            &a.app.admin,
            json!({"config": {"server_id": remote, "transport": "http", "url": http.url}}),
        )
        .await;
    assert_eq!(status, StatusCode::CREATED, "{body}");
    assert_eq!(body["server"]["replica"], "a", "{body}");
    for id in [&stdio, &remote] {
        let on_b = b.wait_held(id, "a", WAIT).await;
        assert!(on_b["tools_count"].as_u64().unwrap() > 0, "{on_b}");
        assert!(
            b.app
                .tool_names(&format!("?server_id={id}"))
                .await
                .contains(&format!("{id}__echo"))
        );
        let body = b
            .app
            .call_tool(&format!("{id}__echo"), json!({"message": "through b"}))
            .await;
        assert!(echo(&body).contains("through b"), "{body}");
    }
    assert!(b.metric("mcp_bridge_forwarded_calls_total").await >= 2.0);
    // A resource read and a prompt, through the replica that does not hold the server.
    b.app
        .read_resource(
            json!({"server_id": stdio, "uri": "demo://resource/static/document/architecture.md"}),
        )
        .await;
    let (status, body) = b
        .app
        .get(&format!("/v1/resources?server_id={stdio}"), &b.app.alice)
        .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert!(!body["resources"].as_array().unwrap().is_empty(), "{body}");
    // A completion, and a prompt rendered, through b too.
    let (status, body) = b
        .app
        .post(
            "/v1/completions",
            &b.app.alice,
            json!({
                "server_id": stdio,
                "ref": {"type": "ref/prompt", "name": "completable-prompt"},
                "argument": {"name": "name", "value": "A"},
                "context": {"arguments": {"department": "Engineering"}}
            }),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(body["server_id"], stdio.as_str(), "{body}");
    assert!(!body["values"].as_array().unwrap().is_empty(), "{body}");
    b.app
        .get_prompt(json!({"server_id": stdio, "name": "simple-prompt"}))
        .await;
    // Removed through b: a closes its connection, and neither shows it any more.
    let (status, body) = b
        .app
        .delete(&format!("/v1/servers/{remote}"), &b.app.admin)
        .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    wait_until("a forgetting the removed server", WAIT, async || {
        match a.app.server(&remote).await {
            (StatusCode::NOT_FOUND, _) => Ok(()),
            other => Err(format!("{other:?}")),
        }
    })
    .await;
    http.stop().await;
}

#[tokio::test]
async fn a_sampling_request_reaches_the_agent_on_a_third_replica_and_is_answered_on_a_second() {
    let Some(mut replicas) = Replicas::new().await else {
        return;
    };
    let a = replicas.start("a").await;
    let b = replicas.start("b").await;
    let c = replicas.start("c").await;
    let id = unique("samp");
    a.app.register_server(everything_stdio(&id)).await;
    b.wait_held(&id, "a", WAIT).await;
    let mut events = EventStream::open(&c.app, &c.app.alice, None).await;
    let call = {
        let (base, token) = (b.app.base.clone(), b.app.alice.clone());
        let name = format!("{id}__trigger-sampling-request");
        tokio::spawn(async move {
            reqwest::Client::new()
                .post(format!("{base}/v1/tools/call"))
                .bearer_auth(token)
                .json(&json!({"id": "call-1", "name": name, "arguments": {"prompt": "hi", "maxTokens": 5}}))
                .send()
                .await
                .unwrap()
                .json::<Value>()
                .await
                .unwrap()
        })
    };
    let request = events
        .wait_for("the sampling request on c", WAIT, |m| {
            m.event == "mcp/sample/req"
        })
        .await;
    let data = &request.data;
    let answer = json!({"req_id": data["id"], "server_id": id, "mcp_request_id": data["mcp_request_id"],
        "content": {"type": "text", "text": "sampled on c"}, "model": "m", "stop_reason": "endTurn"});
    let (status, body) = b
        .app
        .post("/v1/sampling/responses", &b.app.alice, answer.clone())
        .await;
    assert_eq!(status, StatusCode::ACCEPTED, "{body}");
    let result = tokio::time::timeout(WAIT, call).await.unwrap().unwrap();
    assert!(result.to_string().contains("sampled on c"), "{result}");
    // Answered once: a second answer, on yet another replica, is a conflict.
    let (status, body) = a
        .app
        .post("/v1/sampling/responses", &a.app.alice, answer)
        .await;
    assert_eq!(status, StatusCode::CONFLICT, "{body}");
}

#[tokio::test]
async fn a_policy_set_on_one_replica_is_in_force_on_another() {
    let Some(mut replicas) = Replicas::new().await else {
        return;
    };
    let a = replicas.start("a").await;
    let b = replicas.start("b").await;
    let id = unique("pol");
    a.app.register_server(everything_stdio(&id)).await;
    b.wait_held(&id, "a", WAIT).await;
    let echo = format!("{id}__echo");
    let resp = a
        .app
        .client
        .put(format!("{}/v1/policies/no-echo", a.app.base))
        .bearer_auth(&a.app.admin)
        .json(&json!({"match": {"subs": ["alice"]}, "deny": {"tools": [echo]}}))
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), StatusCode::CREATED);
    // Refused on the other replica within its refresh (2 s), listed and called.
    let started = Instant::now();
    wait_until("the policy reaching replica b", WAIT, async || {
        let (status, body) = b
            .app
            .post(
                "/v1/tools/call",
                &b.app.alice,
                json!({"name": echo, "arguments": {"message": "x"}}),
            )
            .await;
        match status {
            StatusCode::NOT_FOUND => Ok(()),
            other => Err(format!("{other}: {body}")),
        }
    })
    .await;
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "{:?}",
        started.elapsed()
    );
    assert!(!b.app.tool_names("").await.contains(&echo));
    let (status, _) = b
        .app
        .post(
            "/v1/tools/call",
            &b.app.bob,
            json!({"name": echo, "arguments": {"message": "x"}}),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "another agent is not matched");
}

#[tokio::test]
async fn replicas_agree_on_a_quarantined_tool_and_its_approval() {
    let Some(mut replicas) = Replicas::new().await else {
        return;
    };
    let pinning = [("MCP_BRIDGE_TOOL_PINNING", "quarantine")];
    let a = replicas.start_with("a", &pinning).await;
    let b = replicas.start_with("b", &pinning).await;
    let state = a.app.data_dir.path().join("rug-state");
    a.app
        .register_server(crate::pinning::rug_stdio("rug", &state))
        .await;
    // A Python stdio server: its start (the SDK's imports) took over 15 s once on CI's loaded
    // cores, so it gets the connect timeout its config has (30 s).
    b.wait_held("rug", "a", 2 * WAIT).await;
    let weather_listed = async |replica: &Replica| {
        replica
            .app
            .tool_names("?server_id=rug")
            .await
            .contains(&"rug__weather".to_owned())
    };
    assert!(weather_listed(&b).await);
    // The owner listens on b; the change happens on a, which holds the server.
    let mut owner = EventStream::open(&b.app, &b.app.admin, None).await;
    b.app.call_tool("rug__swap", json!({})).await;
    let push = owner
        .wait_for("bridge/tool_changed on b", WAIT, |m| {
            is_push(m, "bridge/tool_changed")
        })
        .await;
    assert_eq!(push.data["params"]["quarantined"], true, "{push:?}");
    for replica in [&a, &b] {
        wait_until(
            &format!("rug__weather hidden on {}", replica.id),
            WAIT,
            async || match weather_listed(replica).await {
                false => Ok(()),
                true => Err("listed".into()),
            },
        )
        .await;
        let (status, body) = replica
            .app
            .call("rug__weather", json!({"city": "Oslo"}))
            .await;
        assert_eq!(status, StatusCode::NOT_FOUND, "{body}");
    }
    // Approved on the replica that does not hold it: carried out by the holder, seen by both.
    let (status, body) = b
        .app
        .post(
            "/v1/servers/rug/tools/weather/approve",
            &b.app.admin,
            json!({}),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(body["approved"], true, "{body}");
    assert!(weather_listed(&b).await);
    wait_until(
        "rug__weather listed on a",
        WAIT,
        async || match weather_listed(&a).await {
            true => Ok(()),
            false => Err("hidden".into()),
        },
    )
    .await;
    b.app
        .call_tool("rug__weather", json!({"city": "Oslo"}))
        .await;
    // One event for the change, from the holder alone.
    let more = owner.drain(Duration::from_millis(500)).await;
    assert!(
        !more.iter().any(|m| is_push(m, "bridge/tool_changed")),
        "{more:?}"
    );
}

#[tokio::test]
async fn a_call_cancelled_on_the_replica_that_forwarded_it_is_cancelled_on_the_holder() {
    use crate::cancel::{Marks, assert_cancelled, cancel, spawn_call};
    let Some(mut replicas) = Replicas::new().await else {
        return;
    };
    let a = replicas.start("a").await;
    let b = replicas.start("b").await;
    let id = unique("rc");
    a.app
        .register_server(py_stdio(&id, &unique("rcancel")))
        .await;
    b.wait_held(&id, "a", WAIT).await;
    // Cancelled by DELETE on b, where the call was made.
    let marks = Marks::new();
    let call_id = unique("fwd");
    let name = format!("{id}__slow");
    let call = spawn_call(&b.app, &b.app.alice, &call_id, &name, marks.arguments());
    marks.started.wait().await;
    let (status, body) = cancel(&b.app, &b.app.alice, &call_id).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_cancelled(call, &call_id).await;
    marks.wait_cancelled().await;
    // Cancelled by DELETE on a, the holder, while the request is open on b.
    let marks = Marks::new();
    let call_id = unique("fwd");
    let call = spawn_call(&b.app, &b.app.alice, &call_id, &name, marks.arguments());
    marks.started.wait().await;
    let (status, body) = cancel(&a.app, &a.app.alice, &call_id).await;
    assert_eq!(status, StatusCode::OK, "DELETE on another replica: {body}");
    assert_cancelled(call, &call_id).await;
    marks.wait_cancelled().await;
    // Another agent's call, on any replica: 404, and it runs on.
    let marks = Marks::new();
    let call_id = unique("fwd");
    let call = spawn_call(&b.app, &b.app.alice, &call_id, &name, marks.arguments());
    marks.started.wait().await;
    let (status, body) = cancel(&a.app, &a.app.bob, &call_id).await;
    assert_eq!(status, StatusCode::NOT_FOUND, "{body}");
    assert!(!call.is_finished());
    call.abort();
    marks.wait_cancelled().await;
    // Cancelled by closing the request on b.
    let marks = Marks::new();
    let call = spawn_call(
        &b.app,
        &b.app.alice,
        &unique("fwd"),
        &name,
        marks.arguments(),
    );
    marks.started.wait().await;
    call.abort();
    marks.wait_cancelled().await;
    // The server goes on serving through b.
    b.app
        .call_tool(&format!("{id}__echo"), json!({"text": "on"}))
        .await;
}

/// A task cancelled through another replica than the one running it is stopped there within
/// the sweep (2 s): a call the bridge runs is cancelled upstream, a server's task gets
/// `tasks/cancel`.
#[tokio::test]
async fn a_task_cancelled_on_another_replica_stops_where_it_runs() {
    use crate::cancel::Marks;
    let Some(mut replicas) = Replicas::new().await else {
        return;
    };
    let a = replicas.start("a").await;
    let b = replicas.start("b").await;
    let id = unique("rt");
    a.app.register_server(py_stdio(&id, &unique("rtask"))).await;
    let noted = tempfile::NamedTempFile::new().unwrap();
    let peer = tasks_server("http", noted.path()).await;
    let tasks_id = unique("rtk");
    a.app
        .register_server(json!({"server_id": tasks_id, "transport": "http", "url": peer.url}))
        .await;
    b.wait_held(&id, "a", WAIT).await;
    b.wait_held(&tasks_id, "a", WAIT).await;
    let start = async |name: String, arguments: Value| {
        let body = json!({"name": name, "arguments": arguments, "task": {"ttl": 60_000}});
        let (status, created) = a.app.post("/v1/tools/call", &a.app.alice, body).await;
        assert_eq!(status, StatusCode::ACCEPTED, "{created}");
        created["task_id"].as_str().unwrap().to_owned()
    };
    let marks = Marks::new();
    let bridge_run = start(format!("{id}__slow"), marks.arguments()).await;
    let upstream = start(format!("{tasks_id}__slow_task"), json!({"seconds": 60})).await;
    marks.started.wait().await;
    wait_until("the server's task polled", WAIT, async || {
        let (_, body) = a
            .app
            .get(&format!("/v1/tasks/{upstream}"), &a.app.alice)
            .await;
        match body["task"]["upstream"] == true {
            true => Ok(()),
            false => Err(body.to_string()),
        }
    })
    .await;
    for task_id in [&bridge_run, &upstream] {
        let (status, body) = b
            .app
            .delete(&format!("/v1/tasks/{task_id}"), &b.app.alice)
            .await;
        assert_eq!(status, StatusCode::OK, "{body}");
        assert_eq!(body["status"], "cancelled", "{body}");
    }
    marks.wait_cancelled().await;
    wait_until("tasks/cancel on the server", WAIT, async || {
        let noted = std::fs::read_to_string(noted.path()).unwrap();
        match noted.lines().count() {
            1 => Ok(()),
            n => Err(format!("{n} cancels: {noted:?}")),
        }
    })
    .await;
}

/// An OAuth authorization whose link replica a made is completed by its callback on replica b
/// (a round-robin load balancer sends the person's browser anywhere): the link's state is in
/// the store, b exchanges the code, the server connects on its holder a, and calls work through
/// either replica. The link still works once.
#[tokio::test]
async fn an_oauth_callback_completes_on_another_replica_than_the_links() {
    let Some(mut replicas) = Replicas::new().await else {
        return;
    };
    // One secrets key, as replicas need: the link's verifier is sealed in the store by a and
    // opened by b.
    let key = "5a".repeat(32);
    let sealing = [("MCP_BRIDGE_SECRETS_KEY", key.as_str())];
    let a = replicas.start_with("a", &sealing).await;
    let b = replicas.start_with("b", &sealing).await;
    let peer = oauth_peer(&[]).await;
    let id = unique("roa");
    let config =
        json!({"server_id": id, "transport": "http", "url": peer.url, "connect_timeout": 5});
    let (status, body) = a
        .app
        .post("/v1/servers", &a.app.alice, json!({ "config": config }))
        .await;
    assert_eq!(status, StatusCode::CREATED, "{body}");
    a.app.wait_status(&id, "auth_required", WAIT).await;
    let link = a.app.authorization_url(&id, &a.app.alice).await;

    // The person approves; the authorization server sends the browser back to the callback,
    // which reaches b.
    let browser = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .unwrap();
    let approved = browser.get(&link).send().await.unwrap();
    assert!(approved.status().is_redirection(), "{approved:?}");
    let location = approved.headers()["location"].to_str().unwrap().to_owned();
    let on_a = reqwest::Url::parse(&link).unwrap().join(&location).unwrap();
    assert!(on_a.as_str().starts_with(&a.app.base), "{on_a}");
    let mut on_b = reqwest::Url::parse(&b.app.base).unwrap();
    on_b.set_path(on_a.path());
    on_b.set_query(on_a.query());
    let (status, body) = open_callback(on_b.as_str()).await;
    assert_eq!(status, StatusCode::OK, "the callback on b: {body}");

    // Connected on its holder with the new grant; called through either replica.
    for replica in [&a, &b] {
        replica.wait_held(&id, "a", WAIT).await;
        let (status, body) = replica
            .app
            .call_as(&replica.app.alice, &format!("{id}__whoami"), json!({}))
            .await;
        assert_eq!(status, StatusCode::OK, "through {}: {body}", replica.id);
        assert_eq!(body["is_error"], false, "{body}");
    }
    // The same callback again, on the replica that made the link: used already.
    let (status, body) = open_callback(on_a.as_str()).await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{body}");
    assert!(body.contains("already used"), "{body}");
    let stats = peer.oauth_stats().await;
    assert_eq!(stats["code_exchanges"], 1, "{stats}");
}
