//! The tests of `auth.rs`.

use super::*;

fn auth(secret: &str) -> Auth {
    let config = Config {
        jwt_secret: Some(secret.to_owned().into()),
        ..Config::default()
    };
    Auth::from_config(&config).unwrap()
}

#[tokio::test]
async fn minted_tokens_verify() {
    let auth = auth("s3cret");
    let token = auth
        .mint("alice", true, std::time::Duration::from_secs(60))
        .unwrap();
    assert_eq!(
        auth.verify(&token).await.unwrap(),
        Caller::new("alice", true)
    );
    let token = auth
        .mint("bob", false, std::time::Duration::from_secs(60))
        .unwrap();
    assert!(!auth.verify(&token).await.unwrap().admin);
}

#[tokio::test]
async fn a_remembered_token_still_expires() {
    let auth = auth("s3cret");
    let token = auth
        .mint("alice", false, std::time::Duration::from_secs(60))
        .unwrap();
    let now = jsonwebtoken::get_current_timestamp();
    assert_eq!(auth.verify_at(&token, now).await.unwrap().id, "alice");
    // Served from the cache now, up to the last second the token is valid in.
    let last = now + 60 + auth.validation.leeway;
    assert_eq!(auth.verify_at(&token, last - 1).await.unwrap().id, "alice");
    let error = auth.verify_at(&token, last + 1).await.unwrap_err();
    assert_eq!(
        error.kind(),
        &jsonwebtoken::errors::ErrorKind::ExpiredSignature
    );
    // A token that fails verification is never remembered.
    let forged = format!("{}x", &token[..token.len() - 1]);
    assert!(auth.verify_at(&forged, now).await.is_err());
    assert!(auth.verify_at(&forged, now).await.is_err());
}

#[tokio::test]
async fn a_foreign_signature_is_refused() {
    let token = auth("other")
        .mint("alice", true, std::time::Duration::from_secs(60))
        .unwrap();
    assert!(auth("s3cret").verify(&token).await.is_err());
}

// A key pair made for these tests only.
const ED_PRIVATE: &str = "-----BEGIN PRIVATE KEY-----
MC4CAQAwBQYDK2VwBCIEIAS+UlTADFbWF/Ggvxdea/jWY4W46XkVxq3VKPqwkxtf
-----END PRIVATE KEY-----
";
const ED_PUBLIC: &str = "-----BEGIN PUBLIC KEY-----
MCowBQYDK2VwAyEAJe8ZOx75l2FCFVsnL+NQCJ9nt9EPVO7JyAYdHXelHgE=
-----END PUBLIC KEY-----
";

fn sign(alg: Algorithm, key: &EncodingKey, claims: serde_json::Value) -> String {
    jsonwebtoken::encode(&Header::new(alg), &claims, key).unwrap()
}

#[tokio::test]
async fn a_public_key_accepts_its_own_algorithm_only() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("jwt.pub");
    std::fs::write(&path, ED_PUBLIC).unwrap();
    let auth = Auth::from_config(&Config {
        jwt_public_key: Some(path),
        jwt_issuer: Some("https://issuer.example".into()),
        jwt_audience: Some("mcp-bridge".into()),
        ..Config::default()
    })
    .unwrap();
    let exp = jsonwebtoken::get_current_timestamp() + 600;
    let private = EncodingKey::from_ed_pem(ED_PRIVATE.as_bytes()).unwrap();
    let claims = serde_json::json!({
        "sub": "alice", "exp": exp, "iss": "https://issuer.example", "aud": "mcp-bridge"
    });
    assert_eq!(
        auth.verify(&sign(Algorithm::EdDSA, &private, claims.clone()))
            .await
            .unwrap()
            .id,
        "alice"
    );
    // Algorithm confusion: an HS256 token keyed with the public key's own bytes.
    let confused = EncodingKey::from_secret(ED_PUBLIC.as_bytes()).unwrap();
    assert!(
        auth.verify(&sign(Algorithm::HS256, &confused, claims.clone()))
            .await
            .is_err()
    );
    // Wrong or missing issuer and audience.
    for (field, value) in [
        ("iss", Some("https://other.example")),
        ("iss", None),
        ("aud", Some("someone-else")),
        ("aud", None),
    ] {
        let mut claims = claims.clone();
        match value {
            Some(value) => claims[field] = value.into(),
            None => {
                claims.as_object_mut().unwrap().remove(field);
            }
        }
        assert!(
            auth.verify(&sign(Algorithm::EdDSA, &private, claims))
                .await
                .is_err(),
            "{field} = {value:?}"
        );
    }
    // Only the holder of the private key mints.
    assert!(
        auth.mint("alice", false, std::time::Duration::from_secs(60))
            .is_err()
    );
}

#[tokio::test]
async fn roles_are_read_at_the_configured_claim_path() {
    let config = |path: &str| Config {
        jwt_secret: Some("s3cret".to_owned().into()),
        jwt_roles_claim: path.into(),
        jwt_admin_role: "mcp-admins".into(),
        ..Config::default()
    };
    let key = EncodingKey::from_secret(b"s3cret").unwrap();
    let exp = jsonwebtoken::get_current_timestamp() + 600;
    let claims = serde_json::json!({
        "sub": "alice", "exp": exp, "roles": ["ignored"],
        "realm_access": {"roles": ["lead", "mcp-admins"]}, "scope": "read write",
    });
    let token = sign(Algorithm::HS256, &key, claims);
    let nested = Auth::from_config(&config("realm_access.roles")).unwrap();
    let alice = nested.verify(&token).await.unwrap();
    assert_eq!(alice.roles, ["lead", "mcp-admins"]);
    assert!(alice.admin);
    let spaced = Auth::from_config(&config("scope")).unwrap();
    let alice = spaced.verify(&token).await.unwrap();
    assert_eq!(alice.roles, ["read", "write"]);
    assert!(!alice.admin);
    let nowhere = Auth::from_config(&config("groups.all")).unwrap();
    assert!(nowhere.verify(&token).await.unwrap().roles.is_empty());
    // A minted token puts them where they are read.
    let minted = nested
        .mint("root", true, std::time::Duration::from_secs(60))
        .unwrap();
    let root = nested.verify(&minted).await.unwrap();
    assert!(root.admin);
    assert!(
        root.roles.contains(&"mcp-admins".to_owned()),
        "{:?}",
        root.roles
    );
}

#[tokio::test]
async fn an_audience_may_be_one_of_a_list() {
    let auth = Auth::from_config(&Config {
        jwt_secret: Some("s3cret".to_owned().into()),
        jwt_audience: Some("mcp-bridge".into()),
        ..Config::default()
    })
    .unwrap();
    let key = EncodingKey::from_secret(b"s3cret").unwrap();
    let exp = jsonwebtoken::get_current_timestamp() + 600;
    let listed = serde_json::json!({"sub": "alice", "exp": exp, "aud": ["account", "mcp-bridge"]});
    let token = sign(Algorithm::HS256, &key, listed);
    assert_eq!(auth.verify(&token).await.unwrap().id, "alice");
    let others = serde_json::json!({"sub": "alice", "exp": exp, "aud": ["account", "other"]});
    assert!(
        auth.verify(&sign(Algorithm::HS256, &key, others))
            .await
            .is_err()
    );
}

#[test]
fn the_generated_secret_is_private_and_kept() {
    let dir = tempfile::tempdir().unwrap();
    let first = load_or_generate_secret(dir.path()).unwrap();
    let second = load_or_generate_secret(dir.path()).unwrap();
    assert_eq!(first, second);
    assert_eq!(first.len(), 64);
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(dir.path().join(SECRET_FILE))
            .unwrap()
            .permissions()
            .mode();
        assert_eq!(mode & 0o777, 0o600);
    }
}
