"""A2A 1.0 echo agent (Python, a2a-sdk) used as a test peer.

Usage:
    tests/peers/.venv/bin/python tests/peers/a2a_agent.py --port 0

Binds 127.0.0.1, prints exactly one line ``PORT=<port>`` to stdout once the
server is listening, and exits cleanly on SIGTERM/SIGINT.

Endpoints (all on the same port):
    GET  /.well-known/agent-card.json   A2A 1.0 agent card
    POST /                               JSON-RPC 2.0 (A2A 1.0 methods
                                         ``SendMessage``, ``GetTask``,
                                         ``CancelTask``, ...; v0.3 methods
                                         ``message/send``, ``tasks/get``, ...
                                         via the SDK's compat layer)

Behaviour:
    * ``SendMessage`` (default, blocking) -> a single agent ``Message`` with
      one text part ``echo: <user text>``.
    * ``SendMessage`` with ``configuration.returnImmediately: true`` -> a
      ``Task`` (state ``TASK_STATE_SUBMITTED``) is returned at once; ~0.5 s
      later the task gets an artifact ``echo`` with the text part
      ``echo: <user text>`` and is completed with a status message carrying
      the same text.
    * A ``contextId`` sent by the client is kept in the reply.
    * A user text ``long [STEPS [SECONDS]]`` (default 5 steps of 0.5 s), sent
      with ``SendMessage`` or ``SendStreamingMessage``, starts a long task:
      a ``Task`` (submitted), then per step a ``TASK_STATE_WORKING`` status
      with the message ``step i/N`` and an artifact ``progress`` chunk
      ``chunk i;`` (appended after the first, ``lastChunk`` on the last),
      then ``TASK_STATE_COMPLETED`` with the message ``done: N steps``.
      ``CancelTask`` stops it (``TASK_STATE_CANCELED``) and records the task.
    * ``GET /test/cancelled`` -> the JSON list of task ids cancelled so far.

Options:
    --port N         port to bind (0 = any free port)
    --delay SECONDS  how long a non-blocking task stays working (default 0.5)
    --v03-card       also advertise a v0.3 interface in the agent card, which
                     makes the SDK add the legacy top-level card fields
                     (url, preferredTransport, protocolVersion "0.3")
"""

import argparse
import asyncio
import contextlib
import logging
import signal
import socket
import sys

import uvicorn

from starlette.applications import Starlette
from starlette.responses import JSONResponse
from starlette.routing import Route

from a2a.helpers import new_text_message, new_text_part
from a2a.server.agent_execution import AgentExecutor, RequestContext
from a2a.server.events import EventQueue
from a2a.server.request_handlers import DefaultRequestHandler
from a2a.server.routes import create_agent_card_routes, create_jsonrpc_routes
from a2a.server.tasks import InMemoryTaskStore, TaskUpdater
from a2a.types.a2a_pb2 import (
    AgentCapabilities,
    AgentCard,
    AgentInterface,
    AgentSkill,
    Role,
    Task,
    TaskState,
    TaskStatus,
)


class EchoAgentExecutor(AgentExecutor):
    """Echoes the user's text, as a message or (non-blocking) as a task."""

    def __init__(self, delay: float) -> None:
        self._delay = delay
        # Task ids whose cancel this agent saw, in order (GET /test/cancelled).
        self.cancelled: list[str] = []

    async def execute(
        self, context: RequestContext, event_queue: EventQueue
    ) -> None:
        text = context.get_user_input()
        if text.split()[:1] == ['long']:
            await self._long(context, event_queue, text.split()[1:])
            return
        reply = f'echo: {text}'
        config = context.configuration
        non_blocking = bool(config is not None and config.return_immediately)

        if not non_blocking:
            await event_queue.enqueue_event(
                new_text_message(
                    reply,
                    context_id=context.context_id,
                    role=Role.ROLE_AGENT,
                )
            )
            return

        task_id = context.task_id
        context_id = context.context_id
        task = context.current_task
        if task is None:
            task = Task(
                id=task_id,
                context_id=context_id,
                status=TaskStatus(state=TaskState.TASK_STATE_SUBMITTED),
                history=[context.message] if context.message else [],
            )
            await event_queue.enqueue_event(task)

        updater = TaskUpdater(event_queue, task_id, context_id)
        await updater.start_work()
        await asyncio.sleep(self._delay)
        await updater.add_artifact(
            [new_text_part(reply)], name='echo', last_chunk=True
        )
        await updater.complete(
            new_text_message(
                reply, context_id=context_id, task_id=task_id
            )
        )

    async def _long(
        self, context: RequestContext, event_queue: EventQueue, args: list
    ) -> None:
        """Several status and artifact updates over a few seconds."""
        steps = int(args[0]) if args else 5
        pause = float(args[1]) if len(args) > 1 else 0.5
        task_id, context_id = context.task_id, context.context_id
        if context.current_task is None:
            await event_queue.enqueue_event(
                Task(
                    id=task_id,
                    context_id=context_id,
                    status=TaskStatus(state=TaskState.TASK_STATE_SUBMITTED),
                    history=[context.message] if context.message else [],
                )
            )
        updater = TaskUpdater(event_queue, task_id, context_id)
        for step in range(1, steps + 1):
            if task_id in self.cancelled:
                return
            await updater.update_status(
                TaskState.TASK_STATE_WORKING,
                new_text_message(
                    f'step {step}/{steps}',
                    context_id=context_id,
                    task_id=task_id,
                ),
            )
            await updater.add_artifact(
                [new_text_part(f'chunk {step};')],
                artifact_id='progress',
                name='progress',
                append=step > 1,
                last_chunk=step == steps,
            )
            await asyncio.sleep(pause)
        await updater.complete(
            new_text_message(
                f'done: {steps} steps', context_id=context_id, task_id=task_id
            )
        )

    async def cancel(
        self, context: RequestContext, event_queue: EventQueue
    ) -> None:
        self.cancelled.append(context.task_id)
        updater = TaskUpdater(event_queue, context.task_id, context.context_id)
        await updater.cancel(
            new_text_message(
                'canceled',
                context_id=context.context_id,
                task_id=context.task_id,
            )
        )


def build_card(port: int, advertise_v03: bool) -> AgentCard:
    url = f'http://127.0.0.1:{port}/'
    interfaces = [
        AgentInterface(
            url=url, protocol_binding='JSONRPC', protocol_version='1.0'
        )
    ]
    if advertise_v03:
        interfaces.append(
            AgentInterface(
                url=url, protocol_binding='JSONRPC', protocol_version='0.3'
            )
        )
    return AgentCard(
        name='Echo Agent (python)',
        description='Echoes the text of each user message back as "echo: <text>".',
        version='1.0.0',
        supported_interfaces=interfaces,
        capabilities=AgentCapabilities(
            streaming=True, push_notifications=False
        ),
        default_input_modes=['text/plain'],
        default_output_modes=['text/plain'],
        skills=[
            AgentSkill(
                id='echo',
                name='Echo',
                description='Replies with "echo: " followed by the user text.',
                tags=['echo', 'test'],
                examples=['hello'],
            )
        ],
    )


class _Server(uvicorn.Server):
    """uvicorn server that exits with status 0 on SIGTERM/SIGINT.

    Stock uvicorn re-raises the captured signal after its graceful shutdown,
    so the process would die with 128+SIGTERM; here the signal only asks the
    server to shut down and ``main`` returns normally.
    """

    @contextlib.contextmanager
    def capture_signals(self):  # type: ignore[override]
        loop = asyncio.get_running_loop()
        sigs = (signal.SIGTERM, signal.SIGINT)
        for sig in sigs:
            loop.add_signal_handler(sig, self.handle_exit, sig, None)
        try:
            yield
        finally:
            for sig in sigs:
                loop.remove_signal_handler(sig)


async def serve(app, sock: socket.socket, handler) -> None:
    """Serves `app` on `sock`, prints ``PORT=<port>`` once it listens, and returns after a
    graceful shutdown on SIGTERM/SIGINT (exit status 0), the request handler closed."""
    config = uvicorn.Config(
        app,
        log_level='warning',
        lifespan='off',
        timeout_graceful_shutdown=2,
    )
    server = _Server(config)

    async def announce() -> None:
        while not server.started:
            if server.should_exit:
                return
            await asyncio.sleep(0.01)
        sys.stdout.write(f'PORT={sock.getsockname()[1]}\n')
        sys.stdout.flush()

    announcer = asyncio.create_task(announce())
    try:
        await server.serve(sockets=[sock])
    finally:
        announcer.cancel()
        await handler.aclose()


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('--port', type=int, default=0)
    parser.add_argument('--delay', type=float, default=0.5)
    parser.add_argument('--v03-card', action='store_true')
    args = parser.parse_args()

    logging.basicConfig(level=logging.WARNING, stream=sys.stderr)

    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(('127.0.0.1', args.port))
    port = sock.getsockname()[1]

    card = build_card(port, args.v03_card)
    executor = EchoAgentExecutor(args.delay)
    handler = DefaultRequestHandler(
        agent_executor=executor,
        task_store=InMemoryTaskStore(),
        agent_card=card,
    )
    async def cancelled(_request):
        return JSONResponse(executor.cancelled)

    routes = [Route('/test/cancelled', cancelled, methods=['GET'])]
    routes.extend(create_agent_card_routes(card))
    routes.extend(
        create_jsonrpc_routes(handler, rpc_url='/', enable_v0_3_compat=True)
    )
    app = Starlette(routes=routes)

    await serve(app, sock, handler)


if __name__ == '__main__':
    signal.signal(signal.SIGPIPE, signal.SIG_DFL)
    asyncio.run(main())
