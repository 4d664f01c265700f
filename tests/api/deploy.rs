//! The Docker image and the compose file set only variables the service reads, with values it
//! accepts; the image builds the way this repository is built.

use std::collections::{BTreeMap, HashMap};

use mcp_bridge::config::{Config, variables};

fn repo_file(name: &str) -> String {
    std::fs::read_to_string(std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(name)).unwrap()
}

/// `NAME=value` pairs of the Dockerfile's `ENV` instructions (with continuation lines).
fn dockerfile_env() -> HashMap<String, String> {
    let dockerfile = repo_file("Dockerfile").replace("\\\n", " ");
    dockerfile
        .lines()
        .filter_map(|line| line.trim().strip_prefix("ENV "))
        .flat_map(|rest| {
            rest.split_whitespace()
                .map(str::to_owned)
                .collect::<Vec<_>>()
        })
        .filter_map(|pair| {
            pair.split_once('=')
                .map(|(k, v)| (k.to_owned(), v.to_owned()))
        })
        .collect()
}

/// The `environment` entries of each of the compose file's services (YAML merge keys read as
/// Compose reads them: `<<: *service` starts a service from another's entries, which its own
/// `environment:` replaces, and `<<: *environment` inside one merges another's), `${VAR…}`
/// standing for a value the service accepts.
fn compose_env() -> BTreeMap<String, HashMap<String, String>> {
    let compose = repo_file("docker-compose.yml");
    let mut services: BTreeMap<String, HashMap<String, String>> = BTreeMap::new();
    // Anchors (`&name`) on a service or on its environment, and the service that holds them.
    let mut anchors: HashMap<String, String> = HashMap::new();
    let mut service = String::new();
    let mut inside = false;
    for line in compose.lines() {
        let trimmed = line.trim();
        let (key, value) = trimmed.split_once(':').unwrap_or((trimmed, ""));
        let (key, value) = (key.trim(), value.trim());
        let anchor = value.strip_prefix('&');
        if line.starts_with("  ")
            && !line.starts_with("   ")
            && (value.is_empty() || anchor.is_some())
        {
            service = key.to_owned();
            inside = false;
            if let Some(anchor) = anchor {
                anchors.insert(anchor.to_owned(), service.clone());
            }
            continue;
        }
        if let Some(base) = trimmed.strip_prefix("extends:") {
            let inherited = services.get(base.trim()).cloned().unwrap_or_default();
            services
                .entry(service.clone())
                .or_default()
                .extend(inherited);
            continue;
        }
        if key == "<<" {
            let from = value.trim_start_matches('*');
            let inherited = anchors
                .get(from)
                .and_then(|base| services.get(base))
                .cloned()
                .unwrap_or_default();
            services
                .entry(service.clone())
                .or_default()
                .extend(inherited);
            continue;
        }
        if key == "environment" && (value.is_empty() || anchor.is_some()) {
            inside = true;
            if let Some(anchor) = anchor {
                anchors.insert(anchor.to_owned(), service.clone());
            }
            // A service's own environment replaces what a service-level merge brought.
            services.insert(service.clone(), HashMap::new());
            continue;
        }
        if inside && line.starts_with("      ") {
            let value = value.trim_matches('"');
            let value = match (value.starts_with("${"), key) {
                (true, "MCP_BRIDGE_SECRETS_KEY") => "00".repeat(32),
                (true, _) => "a-value-from-the-environment".to_owned(),
                (false, _) => value.to_owned(),
            };
            services
                .entry(service.clone())
                .or_default()
                .insert(key.to_owned(), value);
        } else {
            inside = false;
        }
    }
    services
}

#[test]
fn the_image_and_compose_set_only_variables_the_service_reads() {
    let image = dockerfile_env();
    assert_eq!(
        image.get("MCP_BRIDGE_DATA_DIR").map(String::as_str),
        Some("/data")
    );
    assert_eq!(
        image.get("MCP_BRIDGE_BIND").map(String::as_str),
        Some("0.0.0.0:8080")
    );
    let services = compose_env();
    let bridges: Vec<&String> = services
        .iter()
        .filter(|(_, env)| env.keys().any(|k| k.starts_with("MCP_BRIDGE_")))
        .map(|(name, _)| name)
        .collect();
    assert_eq!(
        bridges,
        ["mcp-bridge", "replica-a", "replica-b"],
        "{services:?}"
    );
    for name in bridges {
        let bridge: HashMap<String, String> = image
            .clone()
            .into_iter()
            .chain(services[name].clone())
            .filter(|(k, _)| k.starts_with("MCP_BRIDGE_"))
            .collect();
        assert!(
            bridge.contains_key("MCP_BRIDGE_JWT_SECRET"),
            "{name}: {bridge:?}"
        );
        for variable in bridge.keys() {
            assert!(
                variables().any(|v| v == variable),
                "{variable} ({name}) is not a variable mcp-bridge reads"
            );
        }
        let config = Config::from_env(&bridge)
            .unwrap_or_else(|e| panic!("{name}: the service refuses what compose sets: {e}"));
        assert_eq!(config.bind_addr().unwrap().to_string(), "0.0.0.0:8080");
        match name.as_str() {
            "mcp-bridge" => assert!(config.mcp_allowed_hosts.contains(&"mcp-bridge".to_owned())),
            replica => {
                assert!(config.nats_url.is_some(), "{replica}");
                assert_eq!(
                    config.replica_id.as_deref(),
                    replica.strip_prefix("replica-")
                );
            }
        }
    }
}

#[test]
fn the_image_builds_as_this_repository_does() {
    let dockerfile = repo_file("Dockerfile");
    assert!(dockerfile.contains("cargo build --profile dist --locked"));
    assert!(
        dockerfile.contains(r#"CMD ["mcp-bridge", "health"]"#),
        "the health check is the binary's own (the image has no curl)"
    );
    assert!(
        dockerfile.contains(r#"ENTRYPOINT ["tini", "--", "mcp-bridge"]"#),
        "an init as PID 1 passes SIGTERM on and reaps orphans"
    );
    assert!(
        dockerfile.contains("USER mcp-bridge"),
        "runs as a non-root user"
    );
    assert!(dockerfile.contains("VOLUME /data") && dockerfile.contains("EXPOSE 8080"));
    let toolchain = dockerfile
        .lines()
        .find_map(|l| l.strip_prefix("ARG RUST_VERSION="))
        .expect("a pinned Rust version");
    assert_eq!(
        format!("\"{toolchain}\""),
        format!("\"{}\"", env!("CARGO_PKG_RUST_VERSION"))
    );
}

/// The image's build stage (`compiled`) copies only what the Dockerfile names (the manifest, the
/// lock file, `src`, `migrations`, `console`): cargo must be able to plan the release build from
/// just that. Planned without compiling (`--unit-graph`), offline, in a copy of those files.
#[test]
fn the_build_stage_has_every_file_cargo_needs() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let dockerfile = repo_file("Dockerfile");
    let context = tempfile::tempdir().unwrap();
    let mut copied = 0;
    let mut stage = "";
    for line in dockerfile.lines() {
        if let Some(from) = line.strip_prefix("FROM ") {
            stage = from.split_once(" AS ").map_or("", |(_, name)| name.trim());
        }
        let Some(args) = line.strip_prefix("COPY ").filter(|_| stage == "compiled") else {
            continue;
        };
        if args.starts_with("--from") {
            continue;
        }
        let parts: Vec<&str> = args.split_whitespace().collect();
        for source in &parts[..parts.len() - 1] {
            let status = std::process::Command::new("cp")
                .arg("-r")
                .arg(root.join(source))
                .arg(context.path())
                .status()
                .unwrap();
            assert!(status.success(), "COPY {source}");
            copied += 1;
        }
    }
    assert!(copied >= 3, "the build stage copies the sources");
    // What the sources embed (`include_bytes!`, `include_str!`) outside `src` must be copied too:
    // planning the build does not read it, compiling does.
    for embedded in ["migrations", "console"] {
        assert!(
            context.path().join(embedded).is_dir(),
            "the Dockerfile's build stage does not COPY {embedded}/, which the binary embeds"
        );
    }
    let out = std::process::Command::new(env!("CARGO"))
        .args(["build", "--profile", "dist", "--locked", "--offline"])
        .args(["-Z", "unstable-options", "--unit-graph"])
        .env("RUSTC_BOOTSTRAP", "1")
        .env("CARGO_TARGET_DIR", context.path().join("target"))
        .current_dir(context.path())
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "cargo cannot plan the image's build from what it copies: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn every_bridge_in_compose_can_send_traces_to_the_traces_profiles_collector() {
    let services = compose_env();
    for name in ["mcp-bridge", "replica-a", "replica-b"] {
        assert!(
            services[name].contains_key("OTEL_EXPORTER_OTLP_ENDPOINT"),
            "{name}: {:?}",
            services[name]
        );
    }
    let compose = repo_file("docker-compose.yml");
    let collector = compose
        .split("\n  jaeger:\n")
        .nth(1)
        .expect("a jaeger service");
    assert!(collector.contains("profiles: [traces]"), "{collector}");
    // Its OTLP/HTTP port reached from the other containers, not only from its own loopback.
    assert!(
        collector.contains("receivers.otlp.protocols.http.endpoint=0.0.0.0:4318"),
        "{collector}"
    );
    assert!(compose.contains("OTEL_EXPORTER_OTLP_ENDPOINT=http://jaeger:4318"));
}
