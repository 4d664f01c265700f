//! Resources across servers against real peers: merged pages, templates, reads routed by URI,
//! allow lists, subscriptions kept over a restart, servers without the capability.

use std::collections::HashSet;
use std::time::Duration;

use reqwest::StatusCode;
use serde_json::{Value, json};

use crate::helpers::*;

/// Every page of a listing, checking each page's size; the entries in order.
async fn walk(app: &TestApp, path: &str, key: &str, page_size: usize) -> Vec<Value> {
    let mut all = Vec::new();
    let mut cursor = String::new();
    for _ in 0..100 {
        let sep = if path.contains('?') { '&' } else { '?' };
        let (status, body) = app
            .get(&format!("{path}{sep}cursor={cursor}"), &app.alice)
            .await;
        assert_eq!(status, StatusCode::OK, "{body}");
        let page = body[key].as_array().unwrap();
        assert!(
            page.len() <= page_size,
            "a page of {} > {page_size}",
            page.len()
        );
        all.extend(page.iter().cloned());
        cursor = body["next_cursor"].as_str().unwrap().to_owned();
        if cursor.is_empty() {
            return all;
        }
    }
    panic!("{path} did not end within 100 pages");
}

fn uris(entries: &[Value], field: &str) -> Vec<String> {
    entries
        .iter()
        .map(|e| {
            format!(
                "{}|{}",
                e["server_id"].as_str().unwrap(),
                e[field].as_str().unwrap()
            )
        })
        .collect()
}

#[tokio::test]
async fn server_everything_resources_templates_and_reads() {
    let app = spawn_app().await;
    app.register_server(everything_stdio("ev")).await;
    let (status, body) = app.get("/v1/resources?id=res-1", &app.alice).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(body["type"], "mcp/resource/list/resp");
    assert_eq!(body["req_id"], "res-1");
    let resources = body["resources"].as_array().unwrap();
    assert_eq!(resources.len(), 7, "{body}");
    let first = &resources[0];
    assert_eq!(first["server_id"], "ev");
    assert!(
        first["uri"]
            .as_str()
            .unwrap()
            .starts_with("demo://resource/static/document/")
    );
    assert!(!first["name"].as_str().unwrap().is_empty());
    assert!(!first["mime_type"].as_str().unwrap().is_empty());

    let (_, body) = app.get("/v1/resources/templates", &app.alice).await;
    assert_eq!(body["type"], "mcp/resource/templates/resp");
    let templates: Vec<&str> = body["resource_templates"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["uri_template"].as_str().unwrap())
        .collect();
    assert_eq!(templates.len(), 2, "{body}");
    assert!(
        templates.contains(&"demo://resource/dynamic/text/{resourceId}"),
        "{templates:?}"
    );

    // A listed URI, routed without a server_id.
    let uri = first["uri"].as_str().unwrap();
    let body = app.read_resource(json!({"uri": uri})).await;
    assert_eq!(body["type"], "mcp/resource/read/resp");
    assert_eq!(body["server_id"], "ev");
    assert_eq!(body["contents"][0]["uri"], uri);
    assert_eq!(body["contents"][0]["type"], "text");
    assert!(!body["contents"][0]["text"].as_str().unwrap().is_empty());
    // A URI only a template produces: text and blob.
    let body = app
        .read_resource(json!({"uri": "demo://resource/dynamic/text/3"}))
        .await;
    assert_eq!(body["contents"][0]["type"], "text");
    let body = app
        .read_resource(json!({"uri": "demo://resource/dynamic/blob/3"}))
        .await;
    assert_eq!(body["contents"][0]["type"], "blob");
    assert!(!body["contents"][0]["blob"].as_str().unwrap().is_empty());

    for (req, code) in [
        (json!({"uri": "demo://nowhere/1"}), "mcp_resource_not_found"),
        (
            json!({"uri": "demo://nowhere/1", "server_id": "ghost"}),
            "mcp_server_not_found",
        ),
    ] {
        let (status, body) = app.post("/v1/resources/read", &app.alice, req).await;
        assert_eq!(status, StatusCode::NOT_FOUND, "{body}");
        assert_eq!(body["code"], code);
        assert_eq!(body["type"], "mcp/resource/read/resp");
    }
    let (status, _) = app
        .post("/v1/resources/read", &app.alice, json!({"uri": ""}))
        .await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY);
    app.stop().await;
}

#[tokio::test]
async fn merged_pages_walk_every_server_and_its_own_cursors_once() {
    let app = TestApp::builder().page_size(4).spawn().await;
    // Each lists doc/1 and 12 items, 5 per upstream page; the bridge pages by 4.
    app.register_server(py_paged("pa", 12, 5)).await;
    app.register_server(py_paged("pb", 12, 5)).await;
    let all = walk(&app, "/v1/resources", "resources", 4).await;
    let got = uris(&all, "uri");
    let mut expected = Vec::new();
    for server in ["pa", "pb"] {
        expected.push(format!("{server}|fixture://doc/1"));
        expected.extend((0..12).map(|i| format!("{server}|fixture://item/{i:04}")));
    }
    assert_eq!(got, expected);

    // One server's pages only.
    let only_b = walk(&app, "/v1/resources?server_id=pb", "resources", 4).await;
    assert_eq!(only_b.len(), 13);
    assert!(only_b.iter().all(|r| r["server_id"] == "pb"));

    // A server that leaves between pages breaks nothing.
    let (_, first) = app.get("/v1/resources", &app.alice).await;
    let cursor = first["next_cursor"].as_str().unwrap().to_owned();
    app.unregister_server("pa").await;
    let (status, body) = app
        .get(&format!("/v1/resources?cursor={cursor}"), &app.alice)
        .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert!(
        body["resources"]
            .as_array()
            .unwrap()
            .iter()
            .all(|r| r["server_id"] == "pb"),
        "{body}"
    );

    let (status, body) = app.get("/v1/resources?cursor=garbage", &app.alice).await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{body}");
    app.stop().await;
}

#[tokio::test]
async fn templates_and_prompts_page_the_same_way() {
    let app = TestApp::builder().page_size(2).spawn().await;
    for id in ["ta", "tb"] {
        let mut config = py_paged(id, 0, 1);
        config["env"]["FIXTURE_TEMPLATES"] = json!("3");
        app.register_server(config).await;
    }
    let templates = walk(&app, "/v1/resources/templates", "resource_templates", 2).await;
    let got = uris(&templates, "uri_template");
    assert_eq!(got.len(), 8, "{got:?}");
    assert_eq!(
        got.iter().collect::<HashSet<_>>().len(),
        8,
        "no repeats: {got:?}"
    );
    assert_eq!(got[0], "ta|fixture://note/{name}");
    assert_eq!(got[4], "tb|fixture://note/{name}");
    let prompts = walk(&app, "/v1/prompts", "prompts", 2).await;
    let names = uris(&prompts, "name");
    assert_eq!(names.len(), 4, "{names:?}");
    assert_eq!(names.iter().collect::<HashSet<_>>().len(), 4);
    app.stop().await;
}

#[tokio::test]
async fn the_resource_allow_list_hides_what_it_leaves_out() {
    let app = spawn_app().await;
    let mut config = py_paged("al", 12, 0);
    config["resource_allow_list"] = json!(["fixture://item/000*", "fixture://note/only"]);
    let server = app.register_server(config).await;
    assert_eq!(server["resources_count"], 10);
    let (_, body) = app.get("/v1/resources", &app.alice).await;
    let listed: Vec<&str> = body["resources"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["uri"].as_str().unwrap())
        .collect();
    assert_eq!(listed.len(), 10, "{listed:?}");
    assert!(listed.iter().all(|u| u.starts_with("fixture://item/000")));
    let (_, body) = app.get("/v1/resources/templates", &app.alice).await;
    assert_eq!(
        body["resource_templates"].as_array().unwrap().len(),
        1,
        "the note template can make the allowed URI"
    );

    let body = app
        .read_resource(json!({"uri": "fixture://item/0003"}))
        .await;
    assert_eq!(body["contents"][0]["text"], "item 0003");
    let body = app
        .read_resource(json!({"uri": "fixture://note/only"}))
        .await;
    assert_eq!(body["contents"][0]["text"], "note only");
    // Left out, with or without a server_id: the same answer as a URI nobody offers.
    let missing = app
        .post(
            "/v1/resources/read",
            &app.alice,
            json!({"uri": "fixture://nothing/here"}),
        )
        .await;
    for req in [
        json!({"uri": "fixture://doc/1"}),
        json!({"uri": "fixture://doc/1", "server_id": "al"}),
        json!({"uri": "fixture://item/0011"}),
        json!({"uri": "fixture://note/other"}),
    ] {
        let (status, body) = app
            .post("/v1/resources/read", &app.alice, req.clone())
            .await;
        assert_eq!(status, StatusCode::NOT_FOUND, "{req}: {body}");
        assert_eq!(body["code"], missing.1["code"]);
        let (status, _) = app
            .post("/v1/resources/subscribe", &app.alice, req.clone())
            .await;
        assert_eq!(status, StatusCode::NOT_FOUND, "{req}");
    }
    app.stop().await;
}

#[tokio::test]
async fn a_uri_several_servers_offer_needs_a_server_id() {
    let app = spawn_app().await;
    app.register_server(py_stdio("one", &unique("one"))).await;
    app.register_server(py_stdio("two", &unique("two"))).await;
    let (status, body) = app
        .post(
            "/v1/resources/read",
            &app.alice,
            json!({"uri": "fixture://doc/1"}),
        )
        .await;
    assert_eq!(status, StatusCode::CONFLICT, "{body}");
    assert_eq!(body["code"], "conflict");
    let error = body["error"].as_str().unwrap();
    assert!(error.contains("one") && error.contains("two"), "{error}");
    let body = app
        .read_resource(json!({"uri": "fixture://doc/1", "server_id": "two"}))
        .await;
    assert_eq!(body["server_id"], "two");
    assert_eq!(body["contents"][0]["text"], "hello resource");
    app.stop().await;
}

#[tokio::test]
async fn subscriptions_are_kept_per_agent_and_restored_after_a_restart() {
    let app = spawn_app().await;
    let data_dir = app.data_dir.clone();
    app.register_server(py_stdio("sub", &unique("sub"))).await;
    let body = app
        .subscribe(json!({"id": "s-1", "uri": "fixture://doc/1"}))
        .await;
    assert_eq!(body["type"], "mcp/resource/subscribe/resp");
    assert_eq!(body["ok"], true);
    assert_eq!(body["server_id"], "sub");
    let (status, _) = app
        .post(
            "/v1/resources/subscribe",
            &app.bob,
            json!({"uri": "fixture://note/abc"}),
        )
        .await;
    assert_eq!(status, StatusCode::OK);
    let (_, body) = app.call("sub__subscriptions", json!({})).await;
    assert_eq!(
        body["content"][0]["text"],
        "fixture://doc/1\nfixture://note/abc"
    );
    // An unknown URI: nothing is stored.
    let (status, body) = app
        .post(
            "/v1/resources/subscribe",
            &app.alice,
            json!({"uri": "fixture://nope", "server_id": "sub"}),
        )
        .await;
    assert_eq!(status, StatusCode::NOT_FOUND, "{body}");
    app.stop().await;

    let app = spawn_app_in(data_dir).await;
    app.wait_status("sub", "ready", Duration::from_secs(30))
        .await;
    let what = "the subscriptions restored upstream";
    wait_until(what, Duration::from_secs(10), async || {
        let (_, body) = app.call("sub__subscriptions", json!({})).await;
        match body["content"][0]["text"] == "fixture://doc/1\nfixture://note/abc" {
            true => Ok(()),
            false => Err(body.to_string()),
        }
    })
    .await;
    // Bob's unsubscribe ends only his; the server is asked to stop once nobody follows.
    let (status, body) = app
        .post(
            "/v1/resources/unsubscribe",
            &app.bob,
            json!({"uri": "fixture://note/abc"}),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(body["type"], "mcp/resource/unsubscribe/resp");
    let (status, body) = app
        .post(
            "/v1/resources/unsubscribe",
            &app.bob,
            json!({"uri": "fixture://doc/1"}),
        )
        .await;
    assert_eq!(status, StatusCode::NOT_FOUND, "{body}");
    let (_, body) = app.call("sub__subscriptions", json!({})).await;
    assert_eq!(body["content"][0]["text"], "fixture://doc/1");

    // After a reconnect too.
    let (_, body) = app
        .post("/v1/servers/sub/reconnect", &app.admin, json!(null))
        .await;
    assert_eq!(body["server"]["status"], "ready", "{body}");
    let (_, body) = app.call("sub__subscriptions", json!({})).await;
    assert_eq!(body["content"][0]["text"], "fixture://doc/1");
    app.stop().await;
}

#[tokio::test]
async fn servers_without_a_capability_are_skipped_or_answered_501() {
    let dir = tempfile::tempdir().unwrap();
    let app = spawn_app().await;
    let fs = app
        .register_server(npm_stdio(
            "fs",
            "mcp-server-filesystem",
            &[dir.path().to_str().unwrap()],
        ))
        .await;
    assert_eq!(fs["status"], "ready", "{fs}");
    app.register_server(npm_stdio("mem", "mcp-server-memory", &[]))
        .await;
    app.register_server(py_stdio("py", &unique("cap"))).await;

    // Merged listings leave out what a server does not offer, without an error: the filesystem
    // server has neither resources nor prompts, the memory server has resources only.
    let (status, body) = app.get("/v1/resources", &app.alice).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let servers: HashSet<&str> = body["resources"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["server_id"].as_str().unwrap())
        .collect();
    assert_eq!(servers, HashSet::from(["mem", "py"]), "{body}");
    let (status, body) = app.get("/v1/prompts", &app.alice).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert!(
        body["prompts"]
            .as_array()
            .unwrap()
            .iter()
            .all(|p| p["server_id"] == "py"),
        "{body}"
    );
    let body = app
        .read_resource(json!({"uri": "memory://knowledge-graph"}))
        .await;
    assert_eq!(body["server_id"], "mem");

    // Targeted, they answer mcp_capability_missing.
    for path in [
        "/v1/resources?server_id=fs",
        "/v1/resources/templates?server_id=fs",
        "/v1/prompts?server_id=fs",
        "/v1/prompts?server_id=mem",
    ] {
        let (status, body) = app.get(path, &app.alice).await;
        assert_eq!(status, StatusCode::NOT_IMPLEMENTED, "{path}: {body}");
        assert_eq!(body["code"], "mcp_capability_missing");
    }
    let (status, body) = app
        .post(
            "/v1/resources/read",
            &app.alice,
            json!({"uri": "file:///etc/hosts", "server_id": "fs"}),
        )
        .await;
    assert_eq!(status, StatusCode::NOT_IMPLEMENTED, "{body}");
    let (status, body) = app
        .post(
            "/v1/resources/subscribe",
            &app.alice,
            json!({"uri": "file:///etc/hosts", "server_id": "fs"}),
        )
        .await;
    assert_eq!(status, StatusCode::NOT_IMPLEMENTED, "{body}");
    let (status, body) = app
        .post(
            "/v1/resources/subscribe",
            &app.alice,
            json!({"uri": "fixture://doc/1", "server_id": "py"}),
        )
        .await;
    assert_eq!(
        status,
        StatusCode::OK,
        "the fixture supports subscriptions: {body}"
    );
    app.stop().await;
}
