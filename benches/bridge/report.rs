//! The report: each line printed and kept, then written to `target/bench/`; and the
//! machine's line at its head.

use std::path::Path;

#[derive(Default)]
pub(crate) struct Report {
    text: String,
}

impl Report {
    pub(crate) fn line(&mut self, line: &str) {
        println!("{line}");
        self.text.push_str(line);
        self.text.push('\n');
    }

    pub(crate) fn finish(&self, full: bool) {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("target/bench");
        let path = dir.join(if full { "report.md" } else { "smoke.md" });
        if std::fs::create_dir_all(&dir).is_ok() && std::fs::write(&path, &self.text).is_ok() {
            println!("report written to {}", path.display());
        }
    }
}

pub(crate) fn machine() -> String {
    let cpu = std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("model name"))
                .and_then(|l| l.split(':').nth(1))
                .map(|m| m.trim().to_owned())
        })
        .unwrap_or_else(|| "unknown CPU".into());
    let cores = std::thread::available_parallelism().map_or(0, |n| n.get());
    let profile = if cfg!(debug_assertions) {
        "debug"
    } else {
        "release"
    };
    format!("Machine: {cpu}, {cores} cores; bridge and harness built with the {profile} profile.\n")
}
