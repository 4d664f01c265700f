//! A connection's task that wakes itself while it runs is polled again at once, not put back on
//! the runtime's queue.
//!
//! hyper's connection futures often wake their own task from inside its poll: the request body
//! handed to the handler signals that it wants data, the dispatcher sends it, and the same task
//! is woken to read it. Tokio treats a task woken while it runs as one that yields: it goes to
//! the back of the worker's queue and another worker is woken to steal it (a `futex` wake, an
//! `eventfd` write and an `epoll_wait` on the other thread). On a quiet service that happened on
//! most calls, costing CPU on both threads and latency at low concurrency (BENCHMARKS.md,
//! seventh round). [`Repoll`] gives the future a waker of its own: a wake that comes while the
//! future is being polled (from this task or any other) is noted, and the future is polled
//! again before the task returns; a wake that comes between polls reaches the task as before.
//!
//! It stays fair: the future is polled at most [`AGAIN`] times in one poll of its task, and not
//! again once the task's cooperative budget is spent, so a future that yields on purpose still
//! yields.
//!
//! [`Repoller`] is the same for polls a task makes of what it drives itself, such as an upstream
//! connection polled by the call that waits on its answer (`upstream/http/pooled.rs`).

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicU8, Ordering};
use std::task::{Context, Poll, Wake, Waker};

use futures::task::AtomicWaker;

/// At most this many polls of the future in one poll of its task.
const AGAIN: usize = 3;
/// The future is being polled.
const POLLING: u8 = 1;
/// The future was woken while it was being polled.
const WOKEN: u8 = 2;

/// Spawns `future` on the current runtime, polled as [`Repoll`] polls it.
pub fn spawn<F>(future: F) -> tokio::task::JoinHandle<F::Output>
where
    F: Future + Send + 'static,
    F::Output: Send + 'static,
{
    tokio::spawn(Repoll::new(future))
}

/// What the future's waker shares with its task.
#[derive(Default)]
struct Shared {
    state: AtomicU8,
    task: AtomicWaker,
}

impl Wake for Shared {
    fn wake(self: Arc<Self>) {
        self.wake_by_ref();
    }

    fn wake_by_ref(self: &Arc<Self>) {
        // While the future is polled, it is polled again after; otherwise the task is woken.
        if self.state.fetch_or(WOKEN, Ordering::AcqRel) & POLLING == 0 {
            self.task.wake();
        }
    }
}

/// A waker of its own for what a task polls: a wake that comes while [`Repoller::poll`] polls
/// (from this task or any other) makes it poll again before the task returns; a wake that comes
/// between polls reaches the task.
pub struct Repoller {
    shared: Arc<Shared>,
    waker: Waker,
}

impl Default for Repoller {
    fn default() -> Self {
        let shared = Arc::new(Shared::default());
        Self {
            waker: Waker::from(shared.clone()),
            shared,
        }
    }
}

impl Repoller {
    /// `poll` under this waker, for the task of `cx`: again at once when woken meanwhile, at
    /// most [`AGAIN`] times and while the task's cooperative budget lasts.
    pub fn poll<T>(
        &self,
        cx: &mut Context<'_>,
        mut poll: impl FnMut(&mut Context<'_>) -> Poll<T>,
    ) -> Poll<T> {
        self.shared.task.register(cx.waker());
        let mut own = Context::from_waker(&self.waker);
        for _ in 0..AGAIN {
            // A wake noted before this poll has already reached the task: the poll answers it.
            self.shared.state.store(POLLING, Ordering::Release);
            if let Poll::Ready(output) = poll(&mut own) {
                self.shared.state.store(0, Ordering::Release);
                return Poll::Ready(output);
            }
            let woken = self.shared.state.swap(0, Ordering::AcqRel) & WOKEN != 0;
            if !woken {
                return Poll::Pending;
            }
            if !tokio::task::coop::has_budget_remaining() {
                break;
            }
        }
        // Still woken: the task yields, as it would have without this waker.
        cx.waker().wake_by_ref();
        Poll::Pending
    }
}

pin_project_lite::pin_project! {
    /// `inner`, polled again at once when it is woken during its own poll.
    pub struct Repoll<F> {
        #[pin]
        inner: F,
        repoller: Repoller,
    }
}

impl<F> Repoll<F> {
    pub fn new(inner: F) -> Self {
        Self {
            inner,
            repoller: Repoller::default(),
        }
    }
}

impl<F: Future> Future for Repoll<F> {
    type Output = F::Output;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<F::Output> {
        let mut this = self.project();
        this.repoller.poll(cx, |own| this.inner.as_mut().poll(own))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::AtomicUsize;
    use std::time::Duration;

    /// A future that wakes itself `times` times during its polls, counting the polls.
    struct SelfWaking {
        times: usize,
        polls: Arc<AtomicUsize>,
    }

    impl Future for SelfWaking {
        type Output = ();

        fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
            self.polls.fetch_add(1, Ordering::Relaxed);
            if self.times == 0 {
                return Poll::Ready(());
            }
            self.times -= 1;
            cx.waker().wake_by_ref();
            Poll::Pending
        }
    }

    #[tokio::test]
    async fn a_self_wake_is_answered_by_polling_again() {
        let polls = Arc::new(AtomicUsize::new(0));
        let mut future = Box::pin(Repoll::new(SelfWaking {
            times: 2,
            polls: polls.clone(),
        }));
        // One poll of the task is enough: both self-wakes were answered within it.
        let first = std::future::poll_fn(|cx| Poll::Ready(future.as_mut().poll(cx))).await;
        assert!(first.is_ready());
        assert_eq!(polls.load(Ordering::Relaxed), 3);
    }

    #[tokio::test]
    async fn a_future_that_keeps_waking_itself_still_yields() {
        let polls = Arc::new(AtomicUsize::new(0));
        let future = Repoll::new(SelfWaking {
            times: 10,
            polls: polls.clone(),
        });
        let mut future = Box::pin(future);
        let first = std::future::poll_fn(|cx| Poll::Ready(future.as_mut().poll(cx))).await;
        assert!(first.is_pending());
        assert_eq!(polls.load(Ordering::Relaxed), AGAIN);
        // It asked to be polled again, and finishes when it is.
        tokio::time::timeout(Duration::from_secs(5), future)
            .await
            .expect("the future finishes");
        assert_eq!(polls.load(Ordering::Relaxed), 11);
    }

    #[tokio::test]
    async fn a_wake_between_polls_reaches_the_task() {
        let (tx, rx) = tokio::sync::oneshot::channel::<u8>();
        let task = spawn(async move { rx.await.expect("a value") });
        tokio::task::yield_now().await;
        tx.send(7).expect("the task waits");
        let value = tokio::time::timeout(Duration::from_secs(5), task)
            .await
            .expect("the task was woken")
            .expect("the task finished");
        assert_eq!(value, 7);
    }
}
