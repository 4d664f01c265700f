//! The A2A agent messages (beyond the seed): `a2a/agent/*` (register, list, get, refresh,
//! unregister) and `a2a/task/cancel`.

use serde_json::{Map, Value};

use crate::a2e::A2aAgentInfo;
use crate::a2e::{a2e_message, a2e_response};

// ---- A2A agents (beyond the seed) ----

a2e_message! {
    /// a2a/agent/register/req: fetch an A2A agent's card and keep the agent.
    A2aRegisterRequest = "a2a/agent/register/req" {
        /// 8 hex characters when empty.
        agent_id: String,
        /// The agent's base URL; its card is at `/.well-known/agent-card.json`.
        #[schema(pattern = "^https?://[^/?#@]+", required = true, default)]
        url: String,
        /// Headers sent to the agent (values are secret: shown as `***`).
        headers: std::collections::BTreeMap<String, String>,
    }
}

a2e_response! {
    /// a2a/agent/register/resp.
    A2aRegisterResponse = "a2a/agent/register/resp" {
        ok: bool,
        #[serde(skip_serializing_if = "Option::is_none")]
        agent: Option<A2aAgentInfo>,
    }
}

a2e_message! {
    /// a2a/agent/list/req: the registered agents, optionally only those with one of `skill_tags`.
    A2aListRequest = "a2a/agent/list/req" {
        skill_tags: Vec<String>,
    }
}

a2e_response! {
    /// a2a/agent/list/resp.
    A2aListResponse = "a2a/agent/list/resp" {
        agents: Vec<A2aAgentInfo>,
    }
}

a2e_message! {
    /// a2a/agent/get/req.
    A2aGetRequest = "a2a/agent/get/req" {
        agent_id: String,
    }
}

a2e_response! {
    /// a2a/agent/get/resp.
    A2aGetResponse = "a2a/agent/get/resp" {
        // No schema default: an answer's field has none to give, and the default agent's
        // `card` (null) is not the object its schema says.
        #[schema(default)]
        agent: A2aAgentInfo,
    }
}

a2e_message! {
    /// a2a/agent/refresh/req: fetch the agent's card again.
    A2aRefreshRequest = "a2a/agent/refresh/req" {
        agent_id: String,
    }
}

a2e_response! {
    /// a2a/agent/refresh/resp.
    A2aRefreshResponse = "a2a/agent/refresh/resp" {
        ok: bool,
        // No schema default: an answer's field has none to give, and the default agent's
        // `card` (null) is not the object its schema says.
        #[schema(default)]
        agent: A2aAgentInfo,
    }
}

a2e_message! {
    /// a2a/agent/unregister/req.
    A2aUnregisterRequest = "a2a/agent/unregister/req" {
        agent_id: String,
    }
}

a2e_response! {
    /// a2a/agent/unregister/resp.
    A2aUnregisterResponse = "a2a/agent/unregister/resp" {
        ok: bool,
        agent_id: String,
    }
}

a2e_message! {
    /// a2a/task/cancel/req: cancel an A2A task the caller started through the bridge.
    A2aTaskCancelRequest = "a2a/task/cancel/req" {
        agent_id: String,
        task_id: String,
    }
}

a2e_response! {
    /// a2a/task/cancel/resp: the task as the agent has it once cancelled.
    A2aTaskCancelResponse = "a2a/task/cancel/resp" {
        ok: bool,
        agent_id: String,
        task_id: String,
        /// The A2A task, as the agent answers it (camelCase, as A2A defines it).
        #[schema(value_type = HashMap<String, Value>)]
        task: Value = Value::Object(Map::new()),
    }
}
