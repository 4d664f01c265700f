//! Tool search: ranks the catalogue's tools against a natural-language query (BM25F), pure and in memory.
//!
//! Each tool is a document of weighted fields: its name (the part after `{server_id}__`, split at
//! `_`, `-`, `.` and camelCase), its title, its server id, its description, and the names and
//! descriptions of its parameters (`input_schema.properties`). The score of a tool is BM25F
//! (Robertson and Zaragoza, "The Probabilistic Relevance Framework: BM25 and Beyond", 2009): the
//! field frequencies of a term are length-normalised per field, weighted and summed before BM25's
//! saturation, so a word in a tool's name counts more than the same word deep in a description.
//! Since that sum does not depend on the query, it is computed when the index is built, and a
//! query only adds up `idf × saturation` over the postings of its terms.
//!
//! Words are lowercased, a short list of English stop words is dropped, and a light suffix
//! stripper folds plurals and `-ing`/`-ed` forms ("commits" and "committing" meet "commit").
//! BENCHMARKS.md ("Tool search") has the recall and latency this gives on real servers' tools.

use std::collections::HashMap;

use serde_json::Value;

use crate::a2e::ToolInfo;

/// BM25's term frequency saturation.
const K1: f32 = 1.2;

/// A field of a tool's document: its weight and its length normalisation (BM25's `b`).
struct Field {
    weight: f32,
    b: f32,
}

/// Name, title, server id, description, parameters. The name and title are short and say what
/// the tool does; a description is long and mentions many things the tool is not about.
const FIELDS: [Field; 5] = [
    Field {
        weight: 3.0,
        b: 0.3,
    },
    Field {
        weight: 2.0,
        b: 0.3,
    },
    Field {
        weight: 1.0,
        b: 0.0,
    },
    Field {
        weight: 1.0,
        b: 0.75,
    },
    Field {
        weight: 0.5,
        b: 0.75,
    },
];

/// The ranking index over one catalogue snapshot; rebuild it when the catalogue changes.
pub struct Index {
    /// Term to its position in `postings`.
    terms: HashMap<String, u32>,
    /// Per term: its idf and, per tool that has it, the tool's position and saturated weight.
    postings: Vec<Postings>,
    len: usize,
}

struct Postings {
    idf: f32,
    docs: Vec<(u32, f32)>,
}

impl Index {
    /// Builds the index over `tools` (positions are their indices).
    pub fn build(tools: &[ToolInfo]) -> Index {
        let docs: Vec<[Vec<String>; 5]> = tools.iter().map(fields).collect();
        let mut average = [0f32; 5];
        for doc in &docs {
            for (sum, field) in average.iter_mut().zip(doc) {
                *sum += field.len() as f32;
            }
        }
        for sum in &mut average {
            *sum = (*sum / docs.len().max(1) as f32).max(1.0);
        }

        let mut terms: HashMap<String, u32> = HashMap::new();
        let mut postings: Vec<Postings> = Vec::new();
        let mut weights: HashMap<u32, f32> = HashMap::new();
        for (position, doc) in docs.iter().enumerate() {
            weights.clear();
            for ((field, words), avg) in FIELDS.iter().zip(doc).zip(average) {
                let norm = 1.0 - field.b + field.b * words.len() as f32 / avg;
                for word in words {
                    let next = postings.len() as u32;
                    let id = *terms.entry(word.clone()).or_insert(next);
                    if id == next {
                        postings.push(Postings {
                            idf: 0.0,
                            docs: Vec::new(),
                        });
                    }
                    *weights.entry(id).or_default() += field.weight / norm;
                }
            }
            for (&id, &tf) in &weights {
                postings[id as usize]
                    .docs
                    .push((position as u32, tf / (K1 + tf)));
            }
        }
        let n = tools.len() as f32;
        for list in &mut postings {
            let df = list.docs.len() as f32;
            list.idf = (1.0 + (n - df + 0.5) / (df + 0.5)).ln();
            // Positions ascend, so scores are summed in the same order on every run.
            list.docs.sort_unstable_by_key(|&(position, _)| position);
        }
        Index {
            terms,
            postings,
            len: tools.len(),
        }
    }

    /// Up to `limit` (position, score) pairs, best first; empty for a query with no usable term.
    /// Equal scores keep catalogue order, so the answer is the same on every call.
    pub fn search(&self, query: &str, limit: usize) -> Vec<(usize, f32)> {
        let mut weights: HashMap<u32, f32> = HashMap::new();
        for word in tokens(query) {
            for (term, weight) in expand(&word) {
                if let Some(&id) = self.terms.get(term.as_str()) {
                    let best = weights.entry(id).or_default();
                    *best = best.max(weight);
                }
            }
        }
        if weights.is_empty() || limit == 0 {
            return Vec::new();
        }
        let mut ids: Vec<(u32, f32)> = weights.into_iter().collect();
        // Summing in term order makes equal documents get bit-identical scores on every call.
        ids.sort_unstable_by_key(|&(id, _)| id);
        let mut scores = vec![0f32; self.len];
        for (id, weight) in ids {
            let list = &self.postings[id as usize];
            for &(position, saturated) in &list.docs {
                scores[position as usize] += weight * list.idf * saturated;
            }
        }
        let mut hits: Vec<(usize, f32)> = scores
            .into_iter()
            .enumerate()
            .filter(|&(_, s)| s > 0.0)
            .collect();
        let best_first =
            |a: &(usize, f32), b: &(usize, f32)| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0));
        if hits.len() > limit {
            hits.select_nth_unstable_by(limit - 1, best_first);
            hits.truncate(limit);
        }
        hits.sort_unstable_by(best_first);
        hits
    }
}

/// The words of each field of `tool`, in `FIELDS` order.
fn fields(tool: &ToolInfo) -> [Vec<String>; 5] {
    let short = tool
        .name
        .strip_prefix(tool.server_id.as_str())
        .and_then(|rest| rest.strip_prefix("__"))
        .unwrap_or(&tool.name);
    let mut params = Vec::new();
    let resolved;
    let schema = match crate::schema::has_local_definitions(&tool.input_schema) {
        true => {
            resolved = crate::schema::resolve(&tool.input_schema);
            &resolved
        }
        false => &tool.input_schema,
    };
    if let Some(properties) = schema.get("properties").and_then(Value::as_object) {
        for (name, schema) in properties {
            params.extend(tokens(name));
            if let Some(text) = schema.get("description").and_then(Value::as_str) {
                params.extend(tokens(text));
            }
        }
    }
    [
        tokens(short).collect(),
        tokens(tool.title.as_deref().unwrap_or_default()).collect(),
        tokens(&tool.server_id).collect(),
        tokens(&tool.description).collect(),
        params,
    ]
}

/// The normalised words of `text`: split at anything not alphanumeric and at camelCase humps,
/// lowercased, stop words dropped, suffixes stripped.
fn tokens(text: &str) -> impl Iterator<Item = String> + '_ {
    text.split(|c: char| !c.is_alphanumeric())
        .flat_map(humps)
        .map(str::to_lowercase)
        .filter(|word| word.chars().count() > 1 && !STOP_WORDS.contains(&word.as_str()))
        .map(|word| stem(&word))
}

/// Splits `getHTTPResponse` into `get`, `HTTP`, `Response`.
fn humps(word: &str) -> impl Iterator<Item = &str> {
    let chars: Vec<(usize, char)> = word.char_indices().collect();
    let mut cuts = vec![0];
    for i in 1..chars.len() {
        let (prev, here) = (chars[i - 1].1, chars[i].1);
        let next_lower = chars.get(i + 1).is_some_and(|&(_, c)| c.is_lowercase());
        if here.is_uppercase()
            && (prev.is_lowercase() || prev.is_numeric() || (prev.is_uppercase() && next_lower))
        {
            cuts.push(chars[i].0);
        }
    }
    cuts.push(word.len());
    let pieces: Vec<&str> = cuts
        .windows(2)
        .map(|w| &word[w[0]..w[1]])
        .filter(|p| !p.is_empty())
        .collect();
    pieces.into_iter()
}

/// Words too common in queries and descriptions to say which tool is meant: Lucene's English
/// stop words, pronouns and question words.
const STOP_WORDS: &[&str] = &[
    "about", "an", "and", "are", "as", "at", "be", "but", "by", "can", "do", "does", "for", "from",
    "how", "if", "in", "into", "is", "it", "its", "me", "my", "no", "not", "of", "on", "or", "our",
    "please", "so", "such", "that", "the", "their", "them", "then", "there", "these", "they",
    "this", "those", "to", "us", "was", "we", "what", "when", "where", "which", "who", "will",
    "with", "you", "your",
];

/// Words that tools and the people who ask for them use for the same thing. A query word also
/// looks for the others of its group, at half weight, so a tool that says it exactly still wins.
/// Only general software vocabulary belongs here, never one server's wording.
const SYNONYMS: &[&[&str]] = &[
    &["folder", "directory", "dir"],
    &["delete", "remove", "drop", "erase", "forget"],
    &["bug", "issue", "ticket"],
    &["pr", "pull"],
    &["repo", "repository"],
    &["save", "write", "store"],
    &["create", "make", "new", "add"],
    &["edit", "modify", "update"],
    &["find", "search", "lookup", "look"],
    &["show", "display", "view", "get"],
    &["run", "execute", "start", "launch"],
    &["kill", "terminate", "stop"],
    &["javascript", "js", "script"],
    &["image", "picture", "photo", "png", "jpeg", "jpg"],
    &["setting", "config", "configuration", "option"],
    &["url", "link", "address"],
    &["download", "fetch"],
    &["remember", "memory", "recall"],
    &["text", "content"],
    &["tab", "page"],
];

/// `word` with weight 1 and the other words of its synonym groups with weight 0.5, all stemmed.
fn expand(word: &str) -> Vec<(String, f32)> {
    let mut terms = vec![(word.to_string(), 1.0)];
    for group in SYNONYMS {
        if group.iter().any(|w| stem(w) == word) {
            terms.extend(
                group
                    .iter()
                    .map(|w| (stem(w), 0.5))
                    .filter(|(w, _)| w != word),
            );
        }
    }
    terms
}

/// A light English suffix stripper (plural `-s`/`-es`/`-ies`, `-ing`, `-ed`, a final `-e`):
/// enough for tool vocabulary ("creates", "created" and "creating" all become "creat"), where
/// Porter's full rule set gains little.
fn stem(word: &str) -> String {
    if !word.is_ascii() || word.len() <= 3 {
        return word.to_string();
    }
    let mut w = if let Some(b) = word.strip_suffix("ies").filter(|b| b.len() >= 2) {
        format!("{b}y")
    } else if word.ends_with("ss") || word.ends_with("us") || word.ends_with("is") {
        word.to_string()
    } else {
        word.strip_suffix('s').unwrap_or(word).to_string()
    };
    let suffix = ["ing", "ed"].into_iter().find(|s| {
        w.strip_suffix(s)
            .is_some_and(|b| b.len() >= 3 && has_vowel(b))
    });
    if let Some(suffix) = suffix {
        w.truncate(w.len() - suffix.len());
        // "running" -> "run", "stopped" -> "stop"; but "pressed" -> "press", "filled" -> "fill".
        let b = w.as_bytes();
        if b[b.len() - 1] == b[b.len() - 2] && !b"lsz".contains(&b[b.len() - 1]) {
            w.pop();
        }
    }
    if w.len() > 3 && w.ends_with('e') {
        w.pop();
    }
    w
}

fn has_vowel(word: &str) -> bool {
    word.bytes().any(|b| b"aeiouy".contains(&b))
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn tool(server: &str, name: &str, description: &str, params: Value) -> ToolInfo {
        ToolInfo {
            name: format!("{server}__{name}"),
            server_id: server.to_string(),
            description: description.to_string(),
            input_schema: json!({"type": "object", "properties": params}),
            ..ToolInfo::default()
        }
    }

    fn catalogue() -> Vec<ToolInfo> {
        vec![
            tool(
                "git",
                "git_log",
                "Shows the commit logs",
                json!({"repo_path": {"type": "string"}}),
            ),
            tool(
                "browser",
                "takeScreenshot",
                "Captures the visible page as an image",
                json!({}),
            ),
            tool(
                "fs",
                "read_file",
                "Reads a file from disk",
                json!({"path": {"description": "Where the file is"}}),
            ),
            tool(
                "fs",
                "write-file",
                "Writes a file to disk",
                json!({"path": {}, "content": {}}),
            ),
            tool(
                "k8s",
                "kubectl.logs",
                "Prints the logs of a pod",
                json!({"podName": {"type": "string"}}),
            ),
        ]
    }

    fn names(tools: &[ToolInfo], hits: &[(usize, f32)]) -> Vec<String> {
        hits.iter().map(|&(i, _)| tools[i].name.clone()).collect()
    }

    #[test]
    fn splits_names_and_folds_word_forms() {
        let words: Vec<String> =
            tokens("server__getHTTPResponse kebab-case.dotted snake_case").collect();
        assert_eq!(
            words,
            [
                "server", "get", "http", "respons", "kebab", "cas", "dot", "snak", "cas"
            ]
        );
        for (a, b) in [
            ("commits", "commit"),
            ("created", "create"),
            ("creating", "creates"),
            ("running", "run"),
        ] {
            assert_eq!(stem(a), stem(b), "{a} vs {b}");
        }
        assert_eq!(stem("entities"), "entity");
        assert_eq!(stem("pressed"), "press");
    }

    #[test]
    fn ranks_the_tool_whose_name_says_it_first() {
        let tools = catalogue();
        let index = Index::build(&tools);
        assert_eq!(
            names(&tools, &index.search("take a screenshot", 3))[0],
            "browser__takeScreenshot"
        );
        assert_eq!(
            names(&tools, &index.search("show the commit history", 3))[0],
            "git__git_log"
        );
        assert_eq!(
            names(&tools, &index.search("write some content to a file", 3))[0],
            "fs__write-file"
        );
        assert_eq!(
            names(&tools, &index.search("logs of my pod", 3))[0],
            "k8s__kubectl.logs"
        );
        // Parameter names count: only one tool takes a pod name.
        assert_eq!(
            names(&tools, &index.search("podName", 3)),
            ["k8s__kubectl.logs"]
        );
    }

    #[test]
    fn parameters_behind_a_ref_are_found() {
        // As pydantic writes a model argument: the description is in the definition.
        let mut update = tool("crm", "update", "Updates a record", json!({}));
        update.input_schema = json!({"$ref": "#/$defs/Args", "$defs": {
            "Args": {"type": "object", "properties": {"shipping": {"$ref": "#/$defs/Address"}}},
            "Address": {"type": "object", "description": "a postal address"}}});
        let tools = vec![update, tool("crm", "delete", "Deletes a record", json!({}))];
        let index = Index::build(&tools);
        assert_eq!(names(&tools, &index.search("shipping", 3)), ["crm__update"]);
        assert_eq!(names(&tools, &index.search("postal", 3)), ["crm__update"]);
    }

    #[test]
    fn a_query_word_also_looks_for_its_synonyms_at_half_weight() {
        assert!(expand(&stem("folder")).contains(&(stem("directory"), 0.5)));
        assert_eq!(expand("zebra"), [("zebra".to_string(), 1.0)]);
        let tools = vec![
            tool("fs", "create_directory", "Creates a directory", json!({})),
            tool("fs", "folder_icon", "Draws a folder", json!({})),
        ];
        let hits = Index::build(&tools).search("folder", 5);
        assert_eq!(
            names(&tools, &hits),
            ["fs__folder_icon", "fs__create_directory"]
        );
    }

    #[test]
    fn a_query_without_usable_terms_finds_nothing() {
        let index = Index::build(&catalogue());
        assert!(index.search("", 5).is_empty());
        assert!(index.search("  the, of & to ", 5).is_empty());
        assert!(index.search("zyxwvut", 5).is_empty());
        assert!(Index::build(&[]).search("file", 5).is_empty());
    }

    #[test]
    fn returns_at_most_limit_hits_best_first() {
        let tools = catalogue();
        let index = Index::build(&tools);
        let all = index.search("file disk logs", 10);
        assert_eq!(all.len(), 4);
        assert!(all.windows(2).all(|w| w[0].1 >= w[1].1));
        assert_eq!(index.search("file disk logs", 2), all[..2]);
        assert!(index.search("file", 0).is_empty());
    }

    #[test]
    fn equal_scores_keep_catalogue_order() {
        let tools: Vec<ToolInfo> = (0..50)
            .map(|i| tool(&format!("s{i}"), "echo", "Echoes the input", json!({})))
            .collect();
        let index = Index::build(&tools);
        let hits = index.search("echo", 10);
        assert_eq!(
            hits.iter().map(|h| h.0).collect::<Vec<_>>(),
            (0..10).collect::<Vec<_>>()
        );
        assert_eq!(index.search("echo", 10), hits);
    }
}
