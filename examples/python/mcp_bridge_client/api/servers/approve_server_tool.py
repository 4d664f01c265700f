from http import HTTPStatus
from typing import Any
from urllib.parse import quote

import httpx

from ... import errors
from ...client import AuthenticatedClient, Client
from ...models.error_body import ErrorBody
from ...models.tool_approve_response import ToolApproveResponse
from ...types import UNSET, Response, Unset


def _get_kwargs(
    server_id: str,
    tool: str,
    *,
    id: str | Unset = UNSET,
) -> dict[str, Any]:

    params: dict[str, Any] = {}

    params["id"] = id

    params = {k: v for k, v in params.items() if v is not UNSET and v is not None}

    _kwargs: dict[str, Any] = {
        "method": "post",
        "url": "/v1/servers/{server_id}/tools/{tool}/approve".format(
            server_id=quote(str(server_id), safe=""),
            tool=quote(str(tool), safe=""),
        ),
        "params": params,
    }

    return _kwargs


def _parse_response(
    *, client: AuthenticatedClient | Client, response: httpx.Response
) -> ErrorBody | ToolApproveResponse | None:
    if response.status_code == 200:
        response_200 = ToolApproveResponse.from_dict(response.json())

        return response_200

    if response.status_code == 401:
        response_401 = ErrorBody.from_dict(response.json())

        return response_401

    if response.status_code == 403:
        response_403 = ErrorBody.from_dict(response.json())

        return response_403

    if response.status_code == 404:
        response_404 = ErrorBody.from_dict(response.json())

        return response_404

    if response.status_code == 429:
        response_429 = ErrorBody.from_dict(response.json())

        return response_429

    if response.status_code == 503:
        response_503 = ErrorBody.from_dict(response.json())

        return response_503

    if client.raise_on_unexpected_status:
        raise errors.UnexpectedStatus(response.status_code, response.content)
    else:
        return None


def _build_response(
    *, client: AuthenticatedClient | Client, response: httpx.Response
) -> Response[ErrorBody | ToolApproveResponse]:
    return Response(
        status_code=HTTPStatus(response.status_code),
        content=response.content,
        headers=response.headers,
        parsed=_parse_response(client=client, response=response),
    )


def sync_detailed(
    server_id: str,
    tool: str,
    *,
    client: AuthenticatedClient,
    id: str | Unset = UNSET,
) -> Response[ErrorBody | ToolApproveResponse]:
    """Approve the current definition of a tool that changed since it was pinned (tool pinning,
    `MCP_BRIDGE_TOOL_PINNING`): it is pinned, and under `quarantine` the tool is listed and
    callable again. The server's owner or an admin only. Idempotent: when nothing is pending the
    answer is the same 200 with `approved: false`.

    Args:
        server_id (str):
        tool (str):
        id (str | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[ErrorBody | ToolApproveResponse]
    """

    kwargs = _get_kwargs(
        server_id=server_id,
        tool=tool,
        id=id,
    )

    response = client.get_httpx_client().request(
        **kwargs,
    )

    return _build_response(client=client, response=response)


def sync(
    server_id: str,
    tool: str,
    *,
    client: AuthenticatedClient,
    id: str | Unset = UNSET,
) -> ErrorBody | ToolApproveResponse | None:
    """Approve the current definition of a tool that changed since it was pinned (tool pinning,
    `MCP_BRIDGE_TOOL_PINNING`): it is pinned, and under `quarantine` the tool is listed and
    callable again. The server's owner or an admin only. Idempotent: when nothing is pending the
    answer is the same 200 with `approved: false`.

    Args:
        server_id (str):
        tool (str):
        id (str | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        ErrorBody | ToolApproveResponse
    """

    return sync_detailed(
        server_id=server_id,
        tool=tool,
        client=client,
        id=id,
    ).parsed


async def asyncio_detailed(
    server_id: str,
    tool: str,
    *,
    client: AuthenticatedClient,
    id: str | Unset = UNSET,
) -> Response[ErrorBody | ToolApproveResponse]:
    """Approve the current definition of a tool that changed since it was pinned (tool pinning,
    `MCP_BRIDGE_TOOL_PINNING`): it is pinned, and under `quarantine` the tool is listed and
    callable again. The server's owner or an admin only. Idempotent: when nothing is pending the
    answer is the same 200 with `approved: false`.

    Args:
        server_id (str):
        tool (str):
        id (str | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[ErrorBody | ToolApproveResponse]
    """

    kwargs = _get_kwargs(
        server_id=server_id,
        tool=tool,
        id=id,
    )

    response = await client.get_async_httpx_client().request(**kwargs)

    return _build_response(client=client, response=response)


async def asyncio(
    server_id: str,
    tool: str,
    *,
    client: AuthenticatedClient,
    id: str | Unset = UNSET,
) -> ErrorBody | ToolApproveResponse | None:
    """Approve the current definition of a tool that changed since it was pinned (tool pinning,
    `MCP_BRIDGE_TOOL_PINNING`): it is pinned, and under `quarantine` the tool is listed and
    callable again. The server's owner or an admin only. Idempotent: when nothing is pending the
    answer is the same 200 with `approved: false`.

    Args:
        server_id (str):
        tool (str):
        id (str | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        ErrorBody | ToolApproveResponse
    """

    return (
        await asyncio_detailed(
            server_id=server_id,
            tool=tool,
            client=client,
            id=id,
        )
    ).parsed
