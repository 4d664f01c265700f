//! The operator console (`/ui`): its headers here, and the whole of it in a real browser
//! (Debian's Chromium driven by playwright-core, `tests/browser/console.mjs`) against the real
//! service, server-everything, an OAuth-protected server (`tests/peers/oauth_server.py`) and a
//! hostile fixture (`tests/peers/hostile_server.py`).

use std::path::Path;
use std::time::Duration;

use reqwest::StatusCode;
use serde_json::Value;

use crate::helpers::*;

const CHROMIUM: &str = "/usr/bin/chromium";

#[tokio::test]
async fn the_page_and_its_assets_carry_a_strict_policy_and_revalidate() {
    let app = spawn_app().await;
    let page = app
        .client
        .get(format!("{}/ui", app.base))
        .send()
        .await
        .unwrap();
    assert_eq!(page.status(), StatusCode::OK, "no token needed");
    let headers = page.headers().clone();
    let csp = headers["content-security-policy"].to_str().unwrap();
    for part in [
        "default-src 'none'",
        "script-src 'self'",
        "style-src 'self'",
        "connect-src 'self'",
        "frame-ancestors 'none'",
    ] {
        assert!(csp.contains(part), "{csp}");
    }
    assert!(!csp.contains("unsafe"), "{csp}");
    assert_eq!(headers["x-content-type-options"], "nosniff");
    assert_eq!(headers["referrer-policy"], "no-referrer");
    assert!(page.text().await.unwrap().contains("/ui/app.js"));

    let script = app
        .client
        .get(format!("{}/ui/app.js", app.base))
        .send()
        .await
        .unwrap();
    assert_eq!(script.status(), StatusCode::OK);
    assert!(
        script.headers()["content-type"]
            .to_str()
            .unwrap()
            .starts_with("text/javascript")
    );
    let etag = script.headers()["etag"].clone();
    let again = app
        .client
        .get(format!("{}/ui/app.js", app.base))
        .header("if-none-match", etag)
        .send()
        .await
        .unwrap();
    assert_eq!(again.status(), StatusCode::NOT_MODIFIED);

    let (status, _) = app.get("/ui/nothing.js", &app.alice).await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    app.stop().await;
}

/// Screenshots go to a temporary folder, or with `UPDATE_SCREENSHOTS=1` to `docs/console/`,
/// which docs/console.md shows.
#[tokio::test]
async fn the_console_works_in_a_real_browser() {
    assert!(
        Path::new(CHROMIUM).exists(),
        "{CHROMIUM} is missing: run scripts/test.sh (scripts/peers.sh installs Debian's chromium)"
    );
    // At a known port: the bridge's public URL is where the authorization server sends the
    // browser back to.
    let app = TestApp::builder().port(free_port()).spawn().await;
    let oauth = oauth_peer(&[]).await;
    let repo = Path::new(env!("CARGO_MANIFEST_DIR"));
    let temp = tempfile::tempdir().unwrap();
    let shots = match std::env::var_os("UPDATE_SCREENSHOTS") {
        Some(_) => repo.join("docs/console"),
        None => temp.path().to_owned(),
    };
    std::fs::create_dir_all(&shots).unwrap();
    let run = tokio::process::Command::new("node")
        .arg(repo.join("tests/browser/console.mjs"))
        .arg(&app.base)
        .arg(&app.admin)
        .arg(&shots)
        .arg(&oauth.url)
        .arg(&app.alice)
        .kill_on_drop(true)
        .output();
    let output = tokio::time::timeout(Duration::from_secs(120), run)
        .await
        .expect("the browser test ends within 120 s")
        .expect("node runs");
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    let lines: Vec<Value> = stdout
        .lines()
        .filter_map(|line| serde_json::from_str(line).ok())
        .collect();
    // Shown with --nocapture: each step with its timing.
    println!("{stdout}");
    let what = format!("stdout:\n{stdout}\nstderr:\n{stderr}");
    // CI shows a failure's last lines: the whole output goes first, the failed step last, short.
    if let Some(failed) = lines.iter().find(|line| line["ok"] == false) {
        eprintln!("{what}");
        // A step's error, or the last line's errors the browser logged.
        let error = match &failed["error"] {
            Value::String(error) => error.clone(),
            _ => failed["errors"].to_string(),
        };
        let error: Vec<&str> = error.lines().take(6).collect();
        panic!(
            "{} failed after {} ms: {}",
            failed.get("step").unwrap_or(&Value::from("the run")),
            failed["ms"],
            error.join(" | ")
        );
    }
    let steps: Vec<&str> = lines.iter().filter_map(|l| l["step"].as_str()).collect();
    for needed in [
        "sign in with the keyboard: Tab shows focus, Enter submits",
        "register server-everything from the form and see it ready",
        "register an OAuth server and authorize it from its link",
        "search the catalogue",
        "call echo from its form and see the text",
        "call the image tool and see the image",
        "answer a sampling request while the call waits",
        "answer an elicitation from the form its requestedSchema makes",
        "see a tools list_changed arrive live on the events page",
        "the stream reconnects and resumes with Last-Event-ID",
        "the hostile server's markup is shown as text and never runs",
        "approve a held call from the approvals page",
        "a 400 px window: no horizontal overflow on any page",
        "an agent without the admin role sees no admin page",
        "no errors in the browser",
    ] {
        assert!(
            steps.contains(&needed),
            "step {needed:?} did not run: {what}"
        );
    }
    let last = lines.last().unwrap_or_else(|| panic!("no report: {what}"));
    assert_eq!(last["done"], true, "{what}");
    assert_eq!(last["errors"], Value::Array(vec![]), "{what}");
    assert!(output.status.success(), "{what}");
    for page in [
        "servers",
        "catalogue",
        "events",
        "requests",
        "hostile",
        "approvals",
        "admin",
    ] {
        assert!(shots.join(format!("{page}.png")).exists(), "{page}.png");
    }
    app.stop().await;
    oauth.stop().await;
}

/// The console's forms resolve `$ref`s (console/forms.js `resolveRefs`) as the bridge does for
/// search (`mcp_bridge::schema::resolve`): the same copy of the same schemas, bounds included.
#[tokio::test]
async fn the_consoles_ref_resolution_is_the_bridges() {
    let mut laughs = serde_json::Map::new();
    laughs.insert("l0".into(), serde_json::json!({"type": "string"}));
    for level in 1..20 {
        let below = format!("#/$defs/l{}", level - 1);
        laughs.insert(
            format!("l{level}"),
            serde_json::json!({"type": "array", "items": [{"$ref": below}, {"$ref": below}]}),
        );
    }
    let schemas = serde_json::json!([
        {"$ref": "#/$defs/Args", "$defs": {
            "Args": {"type": "object", "required": ["home"], "properties": {
                "home": {"$ref": "#/$defs/Address", "description": "where they live"},
                "work": {"$ref": "#/definitions/Place"},
                "odd": {"$ref": "#/$defs/a~1b%20c"},
                "remote": {"$ref": "https://example.com/schema.json"},
                "missing": {"$ref": "#/$defs/Nope"},
                "node": {"$ref": "#/$defs/Node"}}},
            "Address": {"type": "object", "properties": {"city": {"type": "string"}}},
            "a/b c": {"type": "integer"},
            "Node": {"type": "object", "properties": {"next": {"$ref": "#/$defs/Node"}}}},
         "definitions": {"Place": {"$ref": "#/$defs/Address"}}},
        {"type": "object", "properties": {"deep": {"$ref": "#/$defs/l19"}}, "$defs": laughs},
        {"type": "object", "properties": {"plain": {"type": "boolean"}}}
    ]);
    let repo = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut child = tokio::process::Command::new("node")
        .arg(repo.join("tests/browser/refs.mjs"))
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .expect("node runs");
    let mut stdin = child.stdin.take().unwrap();
    tokio::io::AsyncWriteExt::write_all(&mut stdin, schemas.to_string().as_bytes())
        .await
        .unwrap();
    drop(stdin);
    let output = child.wait_with_output().await.unwrap();
    assert!(output.status.success(), "{output:?}");
    let console: Value = serde_json::from_slice(&output.stdout).unwrap();
    for (i, schema) in schemas.as_array().unwrap().iter().enumerate() {
        assert_eq!(
            console[i],
            mcp_bridge::schema::resolve(schema),
            "schema {i}"
        );
    }
    // And it resolved: the parameter's description and its target's properties are inline.
    assert_eq!(
        console[0]["properties"]["home"]["properties"]["city"]["type"],
        "string"
    );
    assert!(console[0].get("$defs").is_none());
}
