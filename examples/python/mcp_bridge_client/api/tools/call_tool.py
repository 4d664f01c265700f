from http import HTTPStatus
from typing import Any

import httpx

from ... import errors
from ...client import AuthenticatedClient, Client
from ...models.error_body import ErrorBody
from ...models.task_create_response import TaskCreateResponse
from ...models.tool_call_request import ToolCallRequest
from ...models.tool_call_response import ToolCallResponse
from ...types import Response


def _get_kwargs(
    *,
    body: ToolCallRequest,
) -> dict[str, Any]:
    headers: dict[str, Any] = {}

    _kwargs: dict[str, Any] = {
        "method": "post",
        "url": "/v1/tools/call",
    }

    _kwargs["json"] = body.to_dict()

    headers["Content-Type"] = "application/json"

    _kwargs["headers"] = headers
    return _kwargs


def _parse_response(
    *, client: AuthenticatedClient | Client, response: httpx.Response
) -> ErrorBody | TaskCreateResponse | ToolCallResponse | None:
    if response.status_code == 200:
        response_200 = ToolCallResponse.from_dict(response.json())

        return response_200

    if response.status_code == 202:
        response_202 = TaskCreateResponse.from_dict(response.json())

        return response_202

    if response.status_code == 400:
        response_400 = ErrorBody.from_dict(response.json())

        return response_400

    if response.status_code == 401:
        response_401 = ErrorBody.from_dict(response.json())

        return response_401

    if response.status_code == 404:
        response_404 = ErrorBody.from_dict(response.json())

        return response_404

    if response.status_code == 413:
        response_413 = ErrorBody.from_dict(response.json())

        return response_413

    if response.status_code == 415:
        response_415 = ErrorBody.from_dict(response.json())

        return response_415

    if response.status_code == 422:
        response_422 = ErrorBody.from_dict(response.json())

        return response_422

    if response.status_code == 429:
        response_429 = ErrorBody.from_dict(response.json())

        return response_429

    if response.status_code == 501:
        response_501 = ErrorBody.from_dict(response.json())

        return response_501

    if response.status_code == 502:
        response_502 = ErrorBody.from_dict(response.json())

        return response_502

    if response.status_code == 503:
        response_503 = ErrorBody.from_dict(response.json())

        return response_503

    if response.status_code == 504:
        response_504 = ErrorBody.from_dict(response.json())

        return response_504

    if client.raise_on_unexpected_status:
        raise errors.UnexpectedStatus(response.status_code, response.content)
    else:
        return None


def _build_response(
    *, client: AuthenticatedClient | Client, response: httpx.Response
) -> Response[ErrorBody | TaskCreateResponse | ToolCallResponse]:
    return Response(
        status_code=HTTPStatus(response.status_code),
        content=response.content,
        headers=response.headers,
        parsed=_parse_response(client=client, response=response),
    )


def sync_detailed(
    *,
    client: AuthenticatedClient,
    body: ToolCallRequest,
) -> Response[ErrorBody | TaskCreateResponse | ToolCallResponse]:
    """Call a catalogue tool (tool/call). An upstream result with `isError: true` is a 200 with
    `is_error: true`; the server's `timeout` bounds the call.

     **Cancelling.** While the call runs, `DELETE /v1/calls/{id}` with this request's `id` cancels
    it: the server is sent `notifications/cancelled` and this request answers 409 `cancelled` at
    once. Closing this request before the answer cancels the call on the server the same way.

    **Streaming.** Sent with `Accept: text/event-stream`, the call answers 200 with a stream of
    server-sent events instead: zero or more `event: mcp/server/push` (the call's progress,
    `method: "notifications/progress"`, `data:` a `ServerPush` carrying this call's `req_id`),
    then one last `event: tool/call/resp` whose `data:` is the `ToolCallResponse` the JSON answer
    would carry or, when the call failed, its `ErrorBody` (with `code`, `error`, `retryable`);
    the stream ends after it. A body that cannot be read is refused before the stream starts,
    with the statuses below. Closing the stream abandons the call. Only the JSON answer is listed
    as this operation's content, so that generated clients get one typed body; the stream's
    events are the same schemas.

    **Held for approval.** A call a policy's `approve` rule holds answers 202 `task/create/resp`
    at once, with or without `task`: its task is `input_required` until an approver decides
    (`POST /v1/approvals/{task_id}`); approved, it runs and its result is the task's; denied or
    past its time, the task ends `failed` with `forbidden`.

    **As a task.** With `task` (`{"ttl": ms}`), the call answers 202 `task/create/resp` at once
    and the bridge runs it in the background;
    each status change is a `bridge/task_status` push on the event stream, and
    `GET /v1/tasks/{task_id}/result` answers the `tool/call/resp` once it is done. A `ttl`
    outside 1000 to 86400000 is 422.

    Args:
        body (ToolCallRequest): tool/call/req: call a catalogue tool by its namespaced name.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[ErrorBody | TaskCreateResponse | ToolCallResponse]
    """

    kwargs = _get_kwargs(
        body=body,
    )

    response = client.get_httpx_client().request(
        **kwargs,
    )

    return _build_response(client=client, response=response)


def sync(
    *,
    client: AuthenticatedClient,
    body: ToolCallRequest,
) -> ErrorBody | TaskCreateResponse | ToolCallResponse | None:
    """Call a catalogue tool (tool/call). An upstream result with `isError: true` is a 200 with
    `is_error: true`; the server's `timeout` bounds the call.

     **Cancelling.** While the call runs, `DELETE /v1/calls/{id}` with this request's `id` cancels
    it: the server is sent `notifications/cancelled` and this request answers 409 `cancelled` at
    once. Closing this request before the answer cancels the call on the server the same way.

    **Streaming.** Sent with `Accept: text/event-stream`, the call answers 200 with a stream of
    server-sent events instead: zero or more `event: mcp/server/push` (the call's progress,
    `method: "notifications/progress"`, `data:` a `ServerPush` carrying this call's `req_id`),
    then one last `event: tool/call/resp` whose `data:` is the `ToolCallResponse` the JSON answer
    would carry or, when the call failed, its `ErrorBody` (with `code`, `error`, `retryable`);
    the stream ends after it. A body that cannot be read is refused before the stream starts,
    with the statuses below. Closing the stream abandons the call. Only the JSON answer is listed
    as this operation's content, so that generated clients get one typed body; the stream's
    events are the same schemas.

    **Held for approval.** A call a policy's `approve` rule holds answers 202 `task/create/resp`
    at once, with or without `task`: its task is `input_required` until an approver decides
    (`POST /v1/approvals/{task_id}`); approved, it runs and its result is the task's; denied or
    past its time, the task ends `failed` with `forbidden`.

    **As a task.** With `task` (`{"ttl": ms}`), the call answers 202 `task/create/resp` at once
    and the bridge runs it in the background;
    each status change is a `bridge/task_status` push on the event stream, and
    `GET /v1/tasks/{task_id}/result` answers the `tool/call/resp` once it is done. A `ttl`
    outside 1000 to 86400000 is 422.

    Args:
        body (ToolCallRequest): tool/call/req: call a catalogue tool by its namespaced name.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        ErrorBody | TaskCreateResponse | ToolCallResponse
    """

    return sync_detailed(
        client=client,
        body=body,
    ).parsed


async def asyncio_detailed(
    *,
    client: AuthenticatedClient,
    body: ToolCallRequest,
) -> Response[ErrorBody | TaskCreateResponse | ToolCallResponse]:
    """Call a catalogue tool (tool/call). An upstream result with `isError: true` is a 200 with
    `is_error: true`; the server's `timeout` bounds the call.

     **Cancelling.** While the call runs, `DELETE /v1/calls/{id}` with this request's `id` cancels
    it: the server is sent `notifications/cancelled` and this request answers 409 `cancelled` at
    once. Closing this request before the answer cancels the call on the server the same way.

    **Streaming.** Sent with `Accept: text/event-stream`, the call answers 200 with a stream of
    server-sent events instead: zero or more `event: mcp/server/push` (the call's progress,
    `method: "notifications/progress"`, `data:` a `ServerPush` carrying this call's `req_id`),
    then one last `event: tool/call/resp` whose `data:` is the `ToolCallResponse` the JSON answer
    would carry or, when the call failed, its `ErrorBody` (with `code`, `error`, `retryable`);
    the stream ends after it. A body that cannot be read is refused before the stream starts,
    with the statuses below. Closing the stream abandons the call. Only the JSON answer is listed
    as this operation's content, so that generated clients get one typed body; the stream's
    events are the same schemas.

    **Held for approval.** A call a policy's `approve` rule holds answers 202 `task/create/resp`
    at once, with or without `task`: its task is `input_required` until an approver decides
    (`POST /v1/approvals/{task_id}`); approved, it runs and its result is the task's; denied or
    past its time, the task ends `failed` with `forbidden`.

    **As a task.** With `task` (`{"ttl": ms}`), the call answers 202 `task/create/resp` at once
    and the bridge runs it in the background;
    each status change is a `bridge/task_status` push on the event stream, and
    `GET /v1/tasks/{task_id}/result` answers the `tool/call/resp` once it is done. A `ttl`
    outside 1000 to 86400000 is 422.

    Args:
        body (ToolCallRequest): tool/call/req: call a catalogue tool by its namespaced name.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[ErrorBody | TaskCreateResponse | ToolCallResponse]
    """

    kwargs = _get_kwargs(
        body=body,
    )

    response = await client.get_async_httpx_client().request(**kwargs)

    return _build_response(client=client, response=response)


async def asyncio(
    *,
    client: AuthenticatedClient,
    body: ToolCallRequest,
) -> ErrorBody | TaskCreateResponse | ToolCallResponse | None:
    """Call a catalogue tool (tool/call). An upstream result with `isError: true` is a 200 with
    `is_error: true`; the server's `timeout` bounds the call.

     **Cancelling.** While the call runs, `DELETE /v1/calls/{id}` with this request's `id` cancels
    it: the server is sent `notifications/cancelled` and this request answers 409 `cancelled` at
    once. Closing this request before the answer cancels the call on the server the same way.

    **Streaming.** Sent with `Accept: text/event-stream`, the call answers 200 with a stream of
    server-sent events instead: zero or more `event: mcp/server/push` (the call's progress,
    `method: "notifications/progress"`, `data:` a `ServerPush` carrying this call's `req_id`),
    then one last `event: tool/call/resp` whose `data:` is the `ToolCallResponse` the JSON answer
    would carry or, when the call failed, its `ErrorBody` (with `code`, `error`, `retryable`);
    the stream ends after it. A body that cannot be read is refused before the stream starts,
    with the statuses below. Closing the stream abandons the call. Only the JSON answer is listed
    as this operation's content, so that generated clients get one typed body; the stream's
    events are the same schemas.

    **Held for approval.** A call a policy's `approve` rule holds answers 202 `task/create/resp`
    at once, with or without `task`: its task is `input_required` until an approver decides
    (`POST /v1/approvals/{task_id}`); approved, it runs and its result is the task's; denied or
    past its time, the task ends `failed` with `forbidden`.

    **As a task.** With `task` (`{"ttl": ms}`), the call answers 202 `task/create/resp` at once
    and the bridge runs it in the background;
    each status change is a `bridge/task_status` push on the event stream, and
    `GET /v1/tasks/{task_id}/result` answers the `tool/call/resp` once it is done. A `ttl`
    outside 1000 to 86400000 is 422.

    Args:
        body (ToolCallRequest): tool/call/req: call a catalogue tool by its namespaced name.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        ErrorBody | TaskCreateResponse | ToolCallResponse
    """

    return (
        await asyncio_detailed(
            client=client,
            body=body,
        )
    ).parsed
