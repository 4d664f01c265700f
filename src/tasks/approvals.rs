//! Calls held for a person (a policy's `approve` rule): the call becomes a task in
//! `input_required` on no replica, kept in the store with its exact arguments; the approvers
//! are told (`bridge/approval_required`) and list what waits for them; one decision moves it
//! out of `held` in the store (approved: the deciding replica makes the call, once; denied:
//! it fails `forbidden`), and the sweeper fails it `forbidden` when no one decided in time.
//! Nothing of it is in memory, so it waits through a restart and on any replica.

use std::sync::Arc;

use serde_json::{Map, Value, json};

use super::record::info;
use super::{POLL_INTERVAL_MS, TaskError, Tasks};
use crate::a2e::{
    self, Approval, ApprovalDecision, Approvers, Decision, ErrorCode, Message, NotificationMethod,
    ServerPush, TaskInfo, TaskStatus, ToolCallRequest,
};
use crate::access::{Hold, is_approver};
use crate::caller::{Caller, Identity};
use crate::store::{Decided, StoredApproval, StoredTask};

/// The status message of a held call's task begins with this.
pub const HELD: &str = "waiting for a person's approval";

impl Tasks {
    /// Holds `req` (its `task` taken, `ttl` ms) for approval as `hold` says: a task in
    /// `input_required` that no replica runs, its approvers told.
    pub(super) async fn hold(
        &self,
        caller: &Caller,
        req: ToolCallRequest,
        ttl: u64,
        hold: Hold,
    ) -> Result<TaskInfo, TaskError> {
        let now = a2e::now();
        let waits = hold.expires.as_secs_f64();
        let args_sha256 = a2e::args_sha256(&req.arguments);
        let mut identity = json!({
            "admin": caller.admin, "roles": caller.roles, "claims": caller.claims,
        });
        // The call's trace (when spans are exported), for the span of the wait's end.
        if let Some(trace) = crate::telemetry::current() {
            identity[TRACE] = json!(trace);
        }
        let task = StoredTask {
            task_id: a2e::new_id(),
            agent_id: caller.id.clone(),
            req_id: req.id.clone(),
            name: req.name.clone(),
            server_id: self.server_of(&req.name),
            status: TaskStatus::InputRequired.as_str().to_owned(),
            status_message: format!(
                "{HELD} (policy \"{}\"), for at most {} s",
                hold.policy,
                hold.expires.as_secs()
            ),
            // On no replica: none runs it, none restores it, none takes it over.
            replica: String::new(),
            ttl_ms: ttl as i64 + hold.expires.as_millis() as i64,
            poll_interval_ms: POLL_INTERVAL_MS,
            created_at: now,
            updated_at: now,
            expires_at: now + waits + ttl as f64 / 1000.0,
            ..Default::default()
        };
        let approval = StoredApproval {
            task_id: task.task_id.clone(),
            caller: caller.id.clone(),
            identity: identity.to_string(),
            tool: req.name.clone(),
            toolset: req.toolset.clone(),
            arguments: Value::Object(req.arguments).to_string(),
            args_sha256,
            timeout: req.timeout,
            policy: hold.policy.clone(),
            policy_version: hold.version.clone(),
            approvers: serde_json::to_string(&hold.approvers).unwrap_or_default(),
            state: "held".to_owned(),
            decided_by: String::new(),
            created_at: now,
            expires_at: now + waits,
        };
        self.store.insert_held(&task, &approval).await?;
        let shown = shown(&approval);
        let detail = json!({
            "task_id": task.task_id, "args_sha256": shown.args_sha256,
            "policy": hold.policy, "policy_version": hold.version, "expires_at": shown.expires_at,
        });
        self.store
            .record(&caller.id, "tool.call.held", &req.name, &detail.to_string())
            .await;
        tracing::info!(task_id = %task.task_id, agent = %caller.id, tool = %req.name, policy = %hold.policy, "call held for approval");
        self.announce(&task);
        self.tell_approvers(&hold.approvers, &task.server_id, &shown)
            .await;
        Ok(info(&task))
    }

    /// `bridge/approval_required` to every agent the approvers name (but the caller), as its
    /// roles were when it last opened its event stream: kept for replay while it is away.
    async fn tell_approvers(&self, approvers: &Approvers, server_id: &str, approval: &Approval) {
        let agents = match self.store.agent_roles().await {
            Ok(agents) => agents,
            Err(error) => {
                // The list (`GET /v1/approvals`) is the durable truth; the push is a courtesy.
                tracing::warn!(%error, "cannot read whom to tell of a held call");
                return;
            }
        };
        let push = ServerPush {
            server_id: server_id.to_owned(),
            method: NotificationMethod::ApprovalRequired.as_str().to_owned(),
            params: serde_json::to_value(approval).unwrap_or_default(),
            ..Default::default()
        };
        // Serialised once, one copy shared by every approver's channel.
        let approvers: Vec<&str> = agents
            .iter()
            .filter(|(agent, roles)| {
                let mut who = Caller::new(agent.as_str(), false);
                who.identity_mut().roles = serde_json::from_str(roles).unwrap_or_default();
                *agent != approval.caller && is_approver(approvers, &who)
            })
            .map(|(agent, _)| agent.as_str())
            .collect();
        self.hub.publish_to(approvers, ServerPush::TYPE, &push);
    }

    /// The calls waiting for a decision `approver` may take, oldest first (its own calls
    /// included only when it may deny them; see `decide`).
    pub async fn approvals(&self, approver: &Caller) -> Result<Vec<Approval>, TaskError> {
        let pending = self.store.pending_approvals(a2e::now()).await?;
        Ok(pending
            .iter()
            .filter(|held| is_approver(&approvers_of(held), approver))
            .map(shown)
            .collect())
    }

    /// An approver's decision on the held call of task `task_id`. Approved, the call is made
    /// once, here, with the arguments held, as its caller; denied, its task fails `forbidden`.
    /// 404 for no held call, 403 for an agent the policy does not name (and for a caller
    /// approving its own call), 409 for a decision that is not the first, names other
    /// arguments, or comes after the call's time ran out or its task ended.
    pub async fn decide(
        self: &Arc<Self>,
        approver: &Caller,
        task_id: &str,
        decision: &ApprovalDecision,
    ) -> Result<TaskInfo, TaskError> {
        let held = self
            .store
            .approval(task_id)
            .await?
            .ok_or_else(|| TaskError::NotFound(task_id.to_owned()))?;
        if !is_approver(&approvers_of(&held), approver) {
            return Err(TaskError::Forbidden(format!(
                "the call held as task \"{task_id}\" is for the approvers of policy \"{}\" to decide",
                held.policy
            )));
        }
        if decision.decision == Decision::Approve && approver.id == held.caller {
            return Err(TaskError::Forbidden(
                "an agent cannot approve its own call; another approver must".into(),
            ));
        }
        let now = a2e::now();
        let message = match decision.reason.is_empty() {
            true => format!("denied by {}", approver.id),
            false => format!("denied by {}: {}", approver.id, decision.reason),
        };
        let decided = match decision.decision {
            Decision::Approve => Decided::Approved {
                replica: &self.replica,
            },
            Decision::Deny => Decided::Denied { message: &message },
        };
        // What would run is what was held, checked before anything is decided: arguments that
        // do not read back to their hash are never run (the approval stays as it was).
        if decision.decision == Decision::Approve && !held_intact(&held) {
            return Err(TaskError::Conflict(format!(
                "the arguments held as task \"{task_id}\" no longer match their args_sha256: \
                 nothing was run"
            )));
        }
        let won = self
            .store
            .decide_approval(task_id, &decision.args_sha256, &approver.id, decided, now)
            .await?;
        if !won {
            return Err(TaskError::Conflict(
                self.why_not(task_id, &decision.args_sha256, now).await,
            ));
        }
        let detail = json!({
            "task_id": task_id, "caller": held.caller, "args_sha256": held.args_sha256,
            "policy": held.policy, "reason": decision.reason,
        });
        let action = match decision.decision {
            Decision::Approve => "tool.call.approved",
            Decision::Deny => "tool.call.denied",
        };
        self.store
            .record(&approver.id, action, &held.tool, &detail.to_string())
            .await;
        tracing::info!(%task_id, approver = %approver.id, ?decision.decision, "held call decided");
        let task = self
            .store
            .task(task_id, now)
            .await?
            .ok_or_else(|| TaskError::NotFound(task_id.to_owned()))?;
        self.announce(&task);
        let span = match decision.decision {
            Decision::Approve => waited(&held, "approved", None, now),
            Decision::Deny => waited(&held, "denied", Some(&message), now),
        };
        if decision.decision == Decision::Approve {
            let (caller, req) = call_of(&held, &task);
            span.in_scope(|| self.spawn_run(caller, task.clone(), req, true));
        }
        Ok(info(&task))
    }

    /// Why a decision did not win, read back after it lost.
    async fn why_not(&self, task_id: &str, args_sha256: &str, now: f64) -> String {
        let held = match self.store.approval(task_id).await {
            Ok(Some(held)) => held,
            _ => return format!("the call held as task \"{task_id}\" is no longer held"),
        };
        if held.state != "held" {
            let by = match held.decided_by.is_empty() {
                true => String::new(),
                false => format!(" by {}", held.decided_by),
            };
            return format!(
                "the call held as task \"{task_id}\" is already {}{by}; nothing runs",
                held.state
            );
        }
        if held.args_sha256 != args_sha256 {
            return format!(
                "`args_sha256` is not that of the arguments held as task \"{task_id}\" ({}); \
                 nothing runs",
                held.args_sha256
            );
        }
        if held.expires_at <= now {
            return format!(
                "the call held as task \"{task_id}\" waited past its time; nothing runs"
            );
        }
        format!("the task \"{task_id}\" has ended (cancelled by its caller); nothing runs")
    }

    /// Fails the held calls no one decided on in time (`forbidden`), one replica each.
    pub(super) async fn expire_held(&self) {
        let now = a2e::now();
        let expired = match self.store.expire_approvals(now).await {
            Ok(expired) => expired,
            Err(error) => return tracing::warn!(%error, "cannot end held calls past their time"),
        };
        for task_id in expired {
            let Ok(Some(mut task)) = self.store.task(&task_id, now).await else {
                continue;
            };
            task.status = TaskStatus::Failed.as_str().to_owned();
            task.error_code = Some(ErrorCode::Forbidden.as_str().to_owned());
            task.status_message =
                "no approver decided on the call in time; it did not run".to_owned();
            if crate::telemetry::exporting()
                && let Ok(Some(held)) = self.store.approval(&task_id).await
            {
                waited(&held, "expired", Some(&task.status_message), now);
            }
            if self.finish(&mut task).await {
                self.store
                    .record(
                        "",
                        "tool.call.denied",
                        &task.name,
                        &json!({"task_id": task_id, "caller": task.agent_id, "reason": "expired"})
                            .to_string(),
                    )
                    .await;
            }
        }
        if let Err(error) = self.store.forget_approvals().await {
            tracing::warn!(%error, "cannot forget held calls whose task is gone");
        }
    }
}

/// Where a held call's identity keeps the call's trace (a carrier), when spans are exported.
const TRACE: &str = "trace";

/// The span of a held call's wait for a person, made when it ends (`outcome`: `approved`,
/// `denied` or `expired`; `refused` says what the caller is told when it did not run): a
/// child of the held call's span (its trace is kept with the call), linked to the approver's
/// request, with how long it waited. Only when spans are exported (else a disabled span).
fn waited(
    held: &StoredApproval,
    outcome: &'static str,
    refused: Option<&str>,
    now: f64,
) -> tracing::Span {
    if !crate::telemetry::exporting() {
        return tracing::Span::none();
    }
    let span = tracing::info_span!(
        target: crate::telemetry::SPANS,
        "approval.wait",
        otel.name = "approval wait",
        otel.kind = "internal",
        gen_ai.tool.name = %held.tool,
        mcp_bridge.task.id = %held.task_id,
        mcp_bridge.approval.policy = %held.policy,
        mcp_bridge.approval.outcome = outcome,
        mcp_bridge.approval.waited_ms = ((now - held.created_at).max(0.0) * 1000.0) as i64,
    );
    if let Some(approver) = crate::telemetry::current() {
        crate::telemetry::link_to(&span, &approver);
    }
    let identity: Value = serde_json::from_str(&held.identity).unwrap_or_default();
    if let Ok(trace) = serde_json::from_value(identity[TRACE].clone()) {
        crate::telemetry::continue_from_carrier(&span, &trace);
    }
    if let Some(message) = refused {
        crate::telemetry::failed(&span, ErrorCode::Forbidden.as_str(), message);
    }
    span
}

fn approvers_of(held: &StoredApproval) -> Approvers {
    serde_json::from_str(&held.approvers).unwrap_or_default()
}

/// A held call as approvers see it.
fn shown(held: &StoredApproval) -> Approval {
    Approval {
        task_id: held.task_id.clone(),
        caller: held.caller.clone(),
        tool: held.tool.clone(),
        toolset: held.toolset.clone(),
        arguments: serde_json::from_str(&held.arguments).unwrap_or_default(),
        args_sha256: held.args_sha256.clone(),
        policy: held.policy.clone(),
        policy_version: held.policy_version.clone(),
        created_at: held.created_at,
        expires_at: held.expires_at,
    }
}

/// Whether the stored arguments read back to the hash they were held with.
fn held_intact(held: &StoredApproval) -> bool {
    serde_json::from_str::<Map<String, Value>>(&held.arguments)
        .is_ok_and(|arguments| a2e::args_sha256(&arguments) == held.args_sha256)
}

/// The caller and the call an approval makes: exactly what was held.
fn call_of(held: &StoredApproval, task: &StoredTask) -> (Caller, ToolCallRequest) {
    let identity: Value = serde_json::from_str(&held.identity).unwrap_or_default();
    let caller = Caller::from(Identity {
        id: held.caller.clone(),
        admin: identity["admin"].as_bool().unwrap_or(false),
        roles: serde_json::from_value(identity["roles"].clone()).unwrap_or_default(),
        claims: serde_json::from_value(identity["claims"].clone()).unwrap_or_default(),
    });
    let arguments: Map<String, Value> = serde_json::from_str(&held.arguments).unwrap_or_default();
    let req = ToolCallRequest {
        id: task.req_id.clone(),
        name: held.tool.clone(),
        arguments,
        timeout: held.timeout,
        toolset: held.toolset.clone(),
        ..Default::default()
    };
    (caller, req)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_trace_kept_with_a_held_call_leaves_its_caller_as_it_was() {
        let held = StoredApproval {
            caller: "alice".into(),
            identity: json!({
                "admin": true, "roles": ["ops"], "claims": {"team": "a"},
                TRACE: {"traceparent": "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"},
            })
            .to_string(),
            tool: "s1__echo".into(),
            arguments: "{\"x\":1}".into(),
            ..Default::default()
        };
        let (caller, req) = call_of(&held, &StoredTask::default());
        assert_eq!(caller.id, "alice");
        assert!(caller.admin);
        assert_eq!(caller.roles, ["ops"]);
        assert_eq!(caller.claims, *json!({"team": "a"}).as_object().unwrap());
        assert_eq!(req.name, "s1__echo");
        // Not exported: no span to make.
        assert!(waited(&held, "approved", None, 0.0).is_none());
    }
}
