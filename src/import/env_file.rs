//! The `envFile` of an imported VS Code entry: read from the bridge's disk for admins only, as
//! dotenv text, without expanding anything.

use std::collections::BTreeMap;

use crate::caller::Caller;

/// Largest `envFile` read, in bytes: an environment file, not a data file.
const MAX_ENV_FILE_BYTES: u64 = 64 * 1024;

/// Reads an `envFile` (`NAME=VALUE` lines, `#` comments, an optional `export`, quotes around a
/// value) for an admin. Nothing is expanded: `$OTHER` stays as written, so the bridge's own
/// environment never flows into a server's.
pub async fn read_env_file(agent: &Caller, path: &str) -> Result<BTreeMap<String, String>, String> {
    // A non-admin never makes the bridge read a file of its disk, whatever the path.
    if !agent.admin {
        return Err(format!(
            "reading `envFile` ({path}) needs the admin role: put its variables in `env`"
        ));
    }
    let path = std::path::Path::new(path);
    if !path.is_absolute() {
        return Err(format!(
            "`envFile` {} must be an absolute path on the bridge's machine",
            path.display()
        ));
    }
    let cannot = |e: std::io::Error| format!("cannot read `envFile` {}: {e}", path.display());
    let size = tokio::fs::metadata(path).await.map_err(cannot)?.len();
    if size > MAX_ENV_FILE_BYTES {
        return Err(format!(
            "`envFile` {} is {size} bytes, more than the {MAX_ENV_FILE_BYTES} an environment file may have",
            path.display()
        ));
    }
    let text = tokio::fs::read_to_string(path).await.map_err(cannot)?;
    parse_env_file(&text).map_err(|line| {
        format!(
            "line {line} of `envFile` {} is not NAME=VALUE",
            path.display()
        )
    })
}

/// The variables of a dotenv text; the number of the first line that is not one.
fn parse_env_file(text: &str) -> Result<BTreeMap<String, String>, usize> {
    let mut vars = BTreeMap::new();
    for (index, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let line = line.strip_prefix("export ").unwrap_or(line);
        let (name, value) = line.split_once('=').ok_or(index + 1)?;
        let name = name.trim();
        let valid = name.chars().next().is_some_and(|c| !c.is_ascii_digit())
            && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
        if !valid {
            return Err(index + 1);
        }
        let value = value.trim();
        let value = [('"', '"'), ('\'', '\'')]
            .iter()
            .find_map(|(open, close)| {
                value
                    .strip_prefix(*open)
                    .and_then(|v| v.strip_suffix(*close))
            })
            .unwrap_or(value);
        vars.insert(name.to_owned(), value.to_owned());
    }
    Ok(vars)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn env_files_are_read_without_expansion() {
        let vars =
            parse_env_file("# comment\nA=1\nexport B = \"two words\"\nC='$HOME'\n\nD=${SECRET}\n")
                .unwrap();
        assert_eq!(vars["A"], "1");
        assert_eq!(vars["B"], "two words");
        assert_eq!(vars["C"], "$HOME");
        assert_eq!(vars["D"], "${SECRET}");
        assert_eq!(parse_env_file("A=1\nnot a line\n"), Err(2));
        assert_eq!(parse_env_file("1A=x\n"), Err(1));
    }
}
