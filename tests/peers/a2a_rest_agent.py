"""A2A 1.0 echo agent (Python, a2a-sdk) that offers ONLY the HTTP+JSON (REST) binding.

Usage:
    tests/peers/.venv/bin/python tests/peers/a2a_rest_agent.py --port 0

Binds 127.0.0.1, prints exactly one line ``PORT=<port>`` to stdout once the
server is listening, and exits cleanly on SIGTERM/SIGINT.

Endpoints (all on the same port):
    GET  /.well-known/agent-card.json   A2A 1.0 agent card: one interface,
                                         ``HTTP+JSON`` 1.0, and
                                         ``capabilities.extendedAgentCard``
    POST /message:send, /message:stream, GET /tasks/{id},
    POST /tasks/{id}:cancel, ...         the SDK's REST routes
    GET  /extendedAgentCard              the extended card; only with the
                                         header ``Authorization: Bearer
                                         rest-secret`` (else 401 with a
                                         ``google.rpc.Status`` body)

Behaviour: as ``a2a_agent.py`` (the same executor: ``echo: <text>``, tasks
when not blocking, ``long [STEPS [SECONDS]]``), and a user text starting with
``refuse`` is answered with an ``InvalidParamsError`` carrying the message
``refused: <text>`` (HTTP 400, ``INVALID_ARGUMENT``).
"""

import argparse
import asyncio
import logging
import signal
import socket
import sys

from starlette.applications import Starlette
from starlette.middleware.base import BaseHTTPMiddleware
from starlette.responses import JSONResponse

from a2a.server.agent_execution import RequestContext
from a2a.server.events import EventQueue
from a2a.server.request_handlers import DefaultRequestHandler
from a2a.server.routes import create_agent_card_routes, create_rest_routes
from a2a.server.tasks import InMemoryTaskStore
from a2a.types.a2a_pb2 import (
    AgentCapabilities,
    AgentCard,
    AgentInterface,
    AgentSkill,
)
from a2a.utils.errors import InvalidParamsError

from a2a_agent import EchoAgentExecutor, serve

SECRET = 'Bearer rest-secret'


class RefusingExecutor(EchoAgentExecutor):
    """The echo agent, refusing texts that start with ``refuse``."""

    async def execute(
        self, context: RequestContext, event_queue: EventQueue
    ) -> None:
        text = context.get_user_input()
        if text.startswith('refuse'):
            raise InvalidParamsError(message=f'refused: {text}')
        await super().execute(context, event_queue)


def build_cards(port: int) -> tuple[AgentCard, AgentCard]:
    def card(name: str, skills: list[AgentSkill]) -> AgentCard:
        return AgentCard(
            name=name,
            description='Echoes user messages; speaks only HTTP+JSON.',
            version='1.0.0',
            supported_interfaces=[
                AgentInterface(
                    url=f'http://127.0.0.1:{port}',
                    protocol_binding='HTTP+JSON',
                    protocol_version='1.0',
                )
            ],
            capabilities=AgentCapabilities(
                streaming=True,
                push_notifications=False,
                extended_agent_card=True,
            ),
            default_input_modes=['text/plain'],
            default_output_modes=['text/plain'],
            skills=skills,
        )

    echo = AgentSkill(
        id='echo',
        name='Echo',
        description='Replies with "echo: " followed by the user text.',
        tags=['echo', 'rest'],
    )
    secret = AgentSkill(
        id='secret-echo',
        name='Secret echo',
        description='Only on the extended card.',
        tags=['secret'],
    )
    return card('Echo Agent (rest)', [echo]), card(
        'Echo Agent (rest, extended)', [echo, secret]
    )


class ExtendedCardAuth(BaseHTTPMiddleware):
    """Serves the extended card only to callers with the secret."""

    async def dispatch(self, request, call_next):
        if request.url.path.endswith('/extendedAgentCard') and (
            request.headers.get('authorization') != SECRET
        ):
            return JSONResponse(
                {
                    'error': {
                        'code': 401,
                        'status': 'UNAUTHENTICATED',
                        'message': 'the extended card needs credentials',
                    }
                },
                status_code=401,
            )
        return await call_next(request)


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('--port', type=int, default=0)
    parser.add_argument('--delay', type=float, default=0.5)
    args = parser.parse_args()

    logging.basicConfig(level=logging.WARNING, stream=sys.stderr)

    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(('127.0.0.1', args.port))
    port = sock.getsockname()[1]

    card, extended = build_cards(port)
    handler = DefaultRequestHandler(
        agent_executor=RefusingExecutor(args.delay),
        task_store=InMemoryTaskStore(),
        agent_card=card,
        extended_agent_card=extended,
    )
    routes = list(create_agent_card_routes(card))
    routes.extend(create_rest_routes(handler))
    app = Starlette(routes=routes)
    app.add_middleware(ExtendedCardAuth)

    await serve(app, sock, handler)


if __name__ == '__main__':
    signal.signal(signal.SIGPIPE, signal.SIG_DFL)
    asyncio.run(main())
