//! Tool search: ranks catalogue tools by relevance to a query (placeholder until the ranking
//! lands: term overlap over names and descriptions).

use crate::a2e::ToolInfo;

/// An index over tools, by their position in the list it was built from.
pub struct Index {
    docs: Vec<String>,
}

impl Index {
    pub fn build(tools: &[ToolInfo]) -> Index {
        Index {
            docs: tools
                .iter()
                .map(|t| format!("{} {}", t.name, t.description).to_lowercase())
                .collect(),
        }
    }

    pub fn search(&self, query: &str, limit: usize) -> Vec<(usize, f32)> {
        let terms: Vec<String> = query
            .split(|c: char| !c.is_alphanumeric())
            .filter(|t| !t.is_empty())
            .map(str::to_lowercase)
            .collect();
        let mut hits: Vec<(usize, f32)> = self
            .docs
            .iter()
            .enumerate()
            .map(|(i, d)| {
                (
                    i,
                    terms.iter().filter(|t| d.contains(t.as_str())).count() as f32,
                )
            })
            .filter(|(_, s)| *s > 0.0)
            .collect();
        hits.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
        hits.truncate(limit);
        hits
    }
}
