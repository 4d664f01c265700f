// A2A 1.0 echo agent (JavaScript, @a2a-js/sdk + express) used as a test peer.
//
// Usage:
//   node tests/peers/a2a_agent.mjs --port 0
//
// Binds 127.0.0.1, prints exactly one line `PORT=<port>` to stdout once the
// server is listening, and exits cleanly on SIGTERM/SIGINT.
//
// Endpoints (all on the same port):
//   GET  /.well-known/agent-card.json   A2A 1.0 agent card
//   POST /                               JSON-RPC 2.0 (A2A 1.0 methods
//                                        `SendMessage`, `GetTask`,
//                                        `CancelTask`, ...)
//
// Behaviour:
//   * `SendMessage` (default, blocking) -> a single agent `Message` with one
//     text part `echo: <user text>`.
//   * `SendMessage` with `configuration.returnImmediately: true` -> a `Task`
//     (state `TASK_STATE_SUBMITTED`) is returned at once; ~0.5 s later the
//     task gets an artifact `echo` with the text part `echo: <user text>` and
//     is completed with a status message carrying the same text.
//   * A `contextId` sent by the client is kept in the reply.
//   * `CancelTask` on a running task publishes TASK_STATE_CANCELED.
//   * A user text `long [STEPS [SECONDS]]` (default 5 steps of 0.5 s), sent with
//     `SendMessage` or `SendStreamingMessage`, starts a long task: a `Task`
//     (submitted), then per step a TASK_STATE_WORKING status with the message
//     `step i/N` and an artifact `progress` chunk `chunk i;` (appended after the
//     first, `lastChunk` on the last), then TASK_STATE_COMPLETED with the message
//     `done: N steps`. `CancelTask` stops it and records the task.
//   * `GET /test/cancelled` -> the JSON list of task ids cancelled so far.
//
// Options:
//   --port N         port to bind (0 = any free port)
//   --delay SECONDS  how long a non-blocking task stays working (default 0.5)

import http from 'node:http';
import { randomUUID } from 'node:crypto';
import { parseArgs } from 'node:util';

import express from 'express';
import { A2A_PROTOCOL_VERSION, AGENT_CARD_PATH, Role, TaskState } from '@a2a-js/sdk';
import { AgentEvent, DefaultRequestHandler, InMemoryTaskStore } from '@a2a-js/sdk/server';
import { agentCardHandler, jsonRpcHandler, UserBuilder } from '@a2a-js/sdk/server/express';

const { values: args } = parseArgs({
  options: {
    port: { type: 'string', default: '0' },
    delay: { type: 'string', default: '0.5' },
  },
});
const requestedPort = Number.parseInt(args.port, 10);
const delayMs = Math.round(Number.parseFloat(args.delay) * 1000);
if (!Number.isInteger(requestedPort) || requestedPort < 0 || requestedPort > 65535) {
  process.stderr.write(`invalid --port ${args.port}\n`);
  process.exit(2);
}

const textPart = (text) => ({
  content: { $case: 'text', value: text },
  metadata: undefined,
  filename: '',
  mediaType: '',
});

const agentMessage = (text, contextId, taskId = '') => ({
  messageId: randomUUID(),
  contextId,
  taskId,
  role: Role.ROLE_AGENT,
  parts: [textPart(text)],
  metadata: undefined,
  extensions: [],
  referenceTaskIds: [],
});

const userText = (message) =>
  (message?.parts ?? [])
    .filter((p) => p.content?.$case === 'text')
    .map((p) => p.content.value)
    .join('\n');

const now = () => new Date().toISOString();

class EchoAgentExecutor {
  constructor(delay) {
    this.delay = delay;
    this.canceled = new Set();
    this.contexts = new Map(); // taskId -> contextId of running tasks
    this.cancelledLog = []; // every task id whose cancel was seen (GET /test/cancelled)
  }

  async execute(requestContext, eventBus) {
    const { taskId, contextId } = requestContext;
    const message = requestContext.userMessage;
    const words = userText(message).trim().split(/\s+/);
    if (words[0] === 'long') {
      await this.long(requestContext, eventBus, words.slice(1));
      return;
    }
    const reply = `echo: ${userText(message)}`;
    const nonBlocking = requestContext.request?.configuration?.returnImmediately === true;

    if (!nonBlocking) {
      eventBus.publish(AgentEvent.message(agentMessage(reply, contextId)));
      return;
    }

    if (!requestContext.task) {
      eventBus.publish(
        AgentEvent.task({
          id: taskId,
          contextId,
          status: { state: TaskState.TASK_STATE_SUBMITTED, message: undefined, timestamp: now() },
          artifacts: [],
          history: [message],
          metadata: undefined,
        })
      );
    }
    eventBus.publish(
      AgentEvent.statusUpdate({
        taskId,
        contextId,
        status: { state: TaskState.TASK_STATE_WORKING, message: undefined, timestamp: now() },
        metadata: undefined,
      })
    );

    this.contexts.set(taskId, contextId);
    try {
      await new Promise((resolve) => setTimeout(resolve, this.delay));
    } finally {
      this.contexts.delete(taskId);
    }
    if (this.canceled.delete(taskId)) {
      // cancelTask() already published TASK_STATE_CANCELED.
      return;
    }

    eventBus.publish(
      AgentEvent.artifactUpdate({
        taskId,
        contextId,
        artifact: {
          artifactId: randomUUID(),
          name: 'echo',
          description: '',
          parts: [textPart(reply)],
          metadata: undefined,
          extensions: [],
        },
        append: false,
        lastChunk: true,
        metadata: undefined,
      })
    );
    eventBus.publish(
      AgentEvent.statusUpdate({
        taskId,
        contextId,
        status: {
          state: TaskState.TASK_STATE_COMPLETED,
          message: agentMessage(reply, contextId, taskId),
          timestamp: now(),
        },
        metadata: undefined,
      })
    );
  }

  // Several status and artifact updates over a few seconds; stops once cancelled.
  async long(requestContext, eventBus, args) {
    const { taskId, contextId } = requestContext;
    const steps = args[0] ? Number.parseInt(args[0], 10) : 5;
    const pauseMs = Math.round((args[1] ? Number.parseFloat(args[1]) : 0.5) * 1000);
    if (!requestContext.task) {
      eventBus.publish(
        AgentEvent.task({
          id: taskId,
          contextId,
          status: { state: TaskState.TASK_STATE_SUBMITTED, message: undefined, timestamp: now() },
          artifacts: [],
          history: [requestContext.userMessage],
          metadata: undefined,
        })
      );
    }
    this.contexts.set(taskId, contextId);
    try {
      for (let step = 1; step <= steps; step++) {
        if (this.canceled.has(taskId)) return;
        eventBus.publish(
          AgentEvent.statusUpdate({
            taskId,
            contextId,
            status: {
              state: TaskState.TASK_STATE_WORKING,
              message: agentMessage(`step ${step}/${steps}`, contextId, taskId),
              timestamp: now(),
            },
            metadata: undefined,
          })
        );
        eventBus.publish(
          AgentEvent.artifactUpdate({
            taskId,
            contextId,
            artifact: {
              artifactId: 'progress',
              name: 'progress',
              description: '',
              parts: [textPart(`chunk ${step};`)],
              metadata: undefined,
              extensions: [],
            },
            append: step > 1,
            lastChunk: step === steps,
            metadata: undefined,
          })
        );
        await new Promise((resolve) => setTimeout(resolve, pauseMs));
      }
    } finally {
      this.contexts.delete(taskId);
    }
    if (this.canceled.delete(taskId)) return;
    eventBus.publish(
      AgentEvent.statusUpdate({
        taskId,
        contextId,
        status: {
          state: TaskState.TASK_STATE_COMPLETED,
          message: agentMessage(`done: ${steps} steps`, contextId, taskId),
          timestamp: now(),
        },
        metadata: undefined,
      })
    );
  }

  // Called by DefaultRequestHandler.cancelTask while the task's event bus is
  // still alive; the handler waits for a terminal event on that bus.
  cancelTask = async (taskId, eventBus) => {
    const contextId = this.contexts.get(taskId) ?? '';
    this.canceled.add(taskId);
    this.cancelledLog.push(taskId);
    eventBus.publish(
      AgentEvent.statusUpdate({
        taskId,
        contextId,
        status: {
          state: TaskState.TASK_STATE_CANCELED,
          message: agentMessage('canceled', contextId, taskId),
          timestamp: now(),
        },
        metadata: undefined,
      })
    );
  };
}

function buildCard(port) {
  return {
    name: 'Echo Agent (js)',
    description: 'Echoes the text of each user message back as "echo: <text>".',
    supportedInterfaces: [
      {
        url: `http://127.0.0.1:${port}/`,
        protocolBinding: 'JSONRPC',
        tenant: '',
        protocolVersion: A2A_PROTOCOL_VERSION,
      },
    ],
    provider: undefined,
    version: '1.0.0',
    capabilities: {
      streaming: true,
      pushNotifications: false,
      extensions: [],
    },
    securitySchemes: {},
    securityRequirements: [],
    defaultInputModes: ['text/plain'],
    defaultOutputModes: ['text/plain'],
    skills: [
      {
        id: 'echo',
        name: 'Echo',
        description: 'Replies with "echo: " followed by the user text.',
        tags: ['echo', 'js'],
        examples: ['hello'],
        inputModes: [],
        outputModes: [],
        securityRequirements: [],
      },
    ],
    signatures: [],
  };
}

const app = express();
const server = http.createServer(app);

server.on('error', (err) => {
  process.stderr.write(`a2a_agent.mjs: ${err.stack ?? err}\n`);
  process.exit(1);
});

server.listen(requestedPort, '127.0.0.1', () => {
  const { port } = server.address();
  const card = buildCard(port);
  const executor = new EchoAgentExecutor(delayMs);
  const requestHandler = new DefaultRequestHandler(card, new InMemoryTaskStore(), executor);
  app.get('/test/cancelled', (_req, res) => res.json(executor.cancelledLog));
  app.use(`/${AGENT_CARD_PATH}`, agentCardHandler({ agentCardProvider: requestHandler }));
  app.use(jsonRpcHandler({ requestHandler, userBuilder: UserBuilder.noAuthentication }));
  process.stdout.write(`PORT=${port}\n`);
});

let shuttingDown = false;
function shutdown() {
  if (shuttingDown) return;
  shuttingDown = true;
  server.close(() => process.exit(0));
  server.closeIdleConnections?.();
  setTimeout(() => {
    server.closeAllConnections?.();
    process.exit(0);
  }, 1000).unref();
}
process.on('SIGTERM', shutdown);
process.on('SIGINT', shutdown);
