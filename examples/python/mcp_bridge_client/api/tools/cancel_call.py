from http import HTTPStatus
from typing import Any
from urllib.parse import quote

import httpx

from ... import errors
from ...client import AuthenticatedClient, Client
from ...models.error_body import ErrorBody
from ...models.tool_call_cancel_response import ToolCallCancelResponse
from ...types import UNSET, Response, Unset


def _get_kwargs(
    call_id: str,
    *,
    id: str | Unset = UNSET,
) -> dict[str, Any]:

    params: dict[str, Any] = {}

    params["id"] = id

    params = {k: v for k, v in params.items() if v is not UNSET and v is not None}

    _kwargs: dict[str, Any] = {
        "method": "delete",
        "url": "/v1/calls/{call_id}".format(
            call_id=quote(str(call_id), safe=""),
        ),
        "params": params,
    }

    return _kwargs


def _parse_response(
    *, client: AuthenticatedClient | Client, response: httpx.Response
) -> ErrorBody | ToolCallCancelResponse | None:
    if response.status_code == 200:
        response_200 = ToolCallCancelResponse.from_dict(response.json())

        return response_200

    if response.status_code == 401:
        response_401 = ErrorBody.from_dict(response.json())

        return response_401

    if response.status_code == 404:
        response_404 = ErrorBody.from_dict(response.json())

        return response_404

    if response.status_code == 429:
        response_429 = ErrorBody.from_dict(response.json())

        return response_429

    if client.raise_on_unexpected_status:
        raise errors.UnexpectedStatus(response.status_code, response.content)
    else:
        return None


def _build_response(
    *, client: AuthenticatedClient | Client, response: httpx.Response
) -> Response[ErrorBody | ToolCallCancelResponse]:
    return Response(
        status_code=HTTPStatus(response.status_code),
        content=response.content,
        headers=response.headers,
        parsed=_parse_response(client=client, response=response),
    )


def sync_detailed(
    call_id: str,
    *,
    client: AuthenticatedClient,
    id: str | Unset = UNSET,
) -> Response[ErrorBody | ToolCallCancelResponse]:
    """Cancel a tool call in flight (tool/call/cancel), by the `id` of its `POST /v1/tools/call`
    (or `/v1/a2e` `tool/call/req`): the server is sent `notifications/cancelled` at once, the
    call's own request answers 409 `cancelled`, and the call is not retried. Only the agent that
    made the call can cancel it; an unknown id, another agent's call, a call that has already
    ended and one cancelled already are all 404 `not_found` (there is no call of the caller's to
    cancel), and nothing changes.

    Args:
        call_id (str):
        id (str | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[ErrorBody | ToolCallCancelResponse]
    """

    kwargs = _get_kwargs(
        call_id=call_id,
        id=id,
    )

    response = client.get_httpx_client().request(
        **kwargs,
    )

    return _build_response(client=client, response=response)


def sync(
    call_id: str,
    *,
    client: AuthenticatedClient,
    id: str | Unset = UNSET,
) -> ErrorBody | ToolCallCancelResponse | None:
    """Cancel a tool call in flight (tool/call/cancel), by the `id` of its `POST /v1/tools/call`
    (or `/v1/a2e` `tool/call/req`): the server is sent `notifications/cancelled` at once, the
    call's own request answers 409 `cancelled`, and the call is not retried. Only the agent that
    made the call can cancel it; an unknown id, another agent's call, a call that has already
    ended and one cancelled already are all 404 `not_found` (there is no call of the caller's to
    cancel), and nothing changes.

    Args:
        call_id (str):
        id (str | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        ErrorBody | ToolCallCancelResponse
    """

    return sync_detailed(
        call_id=call_id,
        client=client,
        id=id,
    ).parsed


async def asyncio_detailed(
    call_id: str,
    *,
    client: AuthenticatedClient,
    id: str | Unset = UNSET,
) -> Response[ErrorBody | ToolCallCancelResponse]:
    """Cancel a tool call in flight (tool/call/cancel), by the `id` of its `POST /v1/tools/call`
    (or `/v1/a2e` `tool/call/req`): the server is sent `notifications/cancelled` at once, the
    call's own request answers 409 `cancelled`, and the call is not retried. Only the agent that
    made the call can cancel it; an unknown id, another agent's call, a call that has already
    ended and one cancelled already are all 404 `not_found` (there is no call of the caller's to
    cancel), and nothing changes.

    Args:
        call_id (str):
        id (str | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[ErrorBody | ToolCallCancelResponse]
    """

    kwargs = _get_kwargs(
        call_id=call_id,
        id=id,
    )

    response = await client.get_async_httpx_client().request(**kwargs)

    return _build_response(client=client, response=response)


async def asyncio(
    call_id: str,
    *,
    client: AuthenticatedClient,
    id: str | Unset = UNSET,
) -> ErrorBody | ToolCallCancelResponse | None:
    """Cancel a tool call in flight (tool/call/cancel), by the `id` of its `POST /v1/tools/call`
    (or `/v1/a2e` `tool/call/req`): the server is sent `notifications/cancelled` at once, the
    call's own request answers 409 `cancelled`, and the call is not retried. Only the agent that
    made the call can cancel it; an unknown id, another agent's call, a call that has already
    ended and one cancelled already are all 404 `not_found` (there is no call of the caller's to
    cancel), and nothing changes.

    Args:
        call_id (str):
        id (str | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        ErrorBody | ToolCallCancelResponse
    """

    return (
        await asyncio_detailed(
            call_id=call_id,
            client=client,
            id=id,
        )
    ).parsed
