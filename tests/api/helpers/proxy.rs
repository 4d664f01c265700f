//! A TCP proxy that can be cut and brought back: a database going down and coming back.

/// A TCP proxy from a port of its own to `target` that can be cut (every connection closed, new
/// ones refused) and brought back on the same port: a database going down and coming back.
pub struct Proxy {
    pub port: u16,
    target: String,
    serving: Option<tokio::task::JoinHandle<()>>,
}

impl Proxy {
    pub async fn start(target: &str) -> Self {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let port = listener.local_addr().unwrap().port();
        let mut proxy = Self {
            port,
            target: target.to_owned(),
            serving: None,
        };
        proxy.serve(listener);
        proxy
    }

    fn serve(&mut self, listener: tokio::net::TcpListener) {
        let target = self.target.clone();
        self.serving = Some(tokio::spawn(async move {
            // Dropped with this task, which aborts every connection.
            let mut connections = tokio::task::JoinSet::new();
            while let Ok((mut inbound, _)) = listener.accept().await {
                let target = target.clone();
                connections.spawn(async move {
                    if let Ok(mut outbound) = tokio::net::TcpStream::connect(&target).await {
                        let _ = tokio::io::copy_bidirectional(&mut inbound, &mut outbound).await;
                    }
                });
            }
        }));
    }

    /// Closes every connection and refuses new ones.
    pub async fn cut(&mut self) {
        if let Some(serving) = self.serving.take() {
            serving.abort();
            let _ = serving.await;
        }
    }

    /// Accepts connections again, on the same port.
    pub async fn restore(&mut self) {
        let listener = tokio::net::TcpListener::bind(("127.0.0.1", self.port))
            .await
            .unwrap();
        self.serve(listener);
    }
}
