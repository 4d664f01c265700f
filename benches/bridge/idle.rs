//! Idle memory: the RSS of a fresh service with no servers.

use std::time::Duration;

use crate::Bench;
use crate::report::Report;
use crate::service::Bridge;

impl Bench {
    pub(crate) async fn idle(&self, report: &mut Report) {
        let dir = tempfile::tempdir().unwrap();
        let bridge = Bridge::start(dir.path(), &self.auth).await;
        tokio::time::sleep(Duration::from_secs(if self.full { 3 } else { 1 })).await;
        report.line("## Idle memory\n");
        report.line(&format!(
            "Fresh service, no servers, ready and idle: **{:.1} MiB** RSS.\n",
            bridge.rss_mib()
        ));
        bridge.stop().await;
    }
}
