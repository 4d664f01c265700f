from http import HTTPStatus
from typing import Any

import httpx

from ... import errors
from ...client import AuthenticatedClient, Client
from ...models.error_body import ErrorBody
from ...models.server_import_request import ServerImportRequest
from ...models.server_import_response import ServerImportResponse
from ...types import Response


def _get_kwargs(
    *,
    body: ServerImportRequest,
) -> dict[str, Any]:
    headers: dict[str, Any] = {}

    _kwargs: dict[str, Any] = {
        "method": "post",
        "url": "/v1/servers/import",
    }

    _kwargs["json"] = body.to_dict()

    headers["Content-Type"] = "application/json"

    _kwargs["headers"] = headers
    return _kwargs


def _parse_response(
    *, client: AuthenticatedClient | Client, response: httpx.Response
) -> ErrorBody | ServerImportResponse | None:
    if response.status_code == 200:
        response_200 = ServerImportResponse.from_dict(response.json())

        return response_200

    if response.status_code == 400:
        response_400 = ErrorBody.from_dict(response.json())

        return response_400

    if response.status_code == 401:
        response_401 = ErrorBody.from_dict(response.json())

        return response_401

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

    if client.raise_on_unexpected_status:
        raise errors.UnexpectedStatus(response.status_code, response.content)
    else:
        return None


def _build_response(
    *, client: AuthenticatedClient | Client, response: httpx.Response
) -> Response[ErrorBody | ServerImportResponse]:
    return Response(
        status_code=HTTPStatus(response.status_code),
        content=response.content,
        headers=response.headers,
        parsed=_parse_response(client=client, response=response),
    )


def sync_detailed(
    *,
    client: AuthenticatedClient,
    body: ServerImportRequest,
) -> Response[ErrorBody | ServerImportResponse]:
    """Register the servers of a Claude Desktop / Claude Code / Cursor / Cline (`mcpServers`) or VS
    Code (`servers`) configuration as it is: each key becomes a `server_id`, and the answer says per
    server what happened (a bad entry does not stop the others). A server already registered
    under the same id with another config is replaced only with `replace: true`; `disabled`
    entries are `skipped`; an entry with an editor variable (`${input:…}`, `${workspaceFolder}`)
    fails naming it; `timeout` is honoured (seconds for Cline, milliseconds for Claude Code);
    `envFile` is read for admins only.

    Args:
        body (ServerImportRequest): mcp/server/import/req: the server list of a Claude Desktop /
            Claude Code / Cursor / Cline
            (`mcpServers`) or VS Code (`servers`) configuration, as it is in that file.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[ErrorBody | ServerImportResponse]
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
    body: ServerImportRequest,
) -> ErrorBody | ServerImportResponse | None:
    """Register the servers of a Claude Desktop / Claude Code / Cursor / Cline (`mcpServers`) or VS
    Code (`servers`) configuration as it is: each key becomes a `server_id`, and the answer says per
    server what happened (a bad entry does not stop the others). A server already registered
    under the same id with another config is replaced only with `replace: true`; `disabled`
    entries are `skipped`; an entry with an editor variable (`${input:…}`, `${workspaceFolder}`)
    fails naming it; `timeout` is honoured (seconds for Cline, milliseconds for Claude Code);
    `envFile` is read for admins only.

    Args:
        body (ServerImportRequest): mcp/server/import/req: the server list of a Claude Desktop /
            Claude Code / Cursor / Cline
            (`mcpServers`) or VS Code (`servers`) configuration, as it is in that file.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        ErrorBody | ServerImportResponse
    """

    return sync_detailed(
        client=client,
        body=body,
    ).parsed


async def asyncio_detailed(
    *,
    client: AuthenticatedClient,
    body: ServerImportRequest,
) -> Response[ErrorBody | ServerImportResponse]:
    """Register the servers of a Claude Desktop / Claude Code / Cursor / Cline (`mcpServers`) or VS
    Code (`servers`) configuration as it is: each key becomes a `server_id`, and the answer says per
    server what happened (a bad entry does not stop the others). A server already registered
    under the same id with another config is replaced only with `replace: true`; `disabled`
    entries are `skipped`; an entry with an editor variable (`${input:…}`, `${workspaceFolder}`)
    fails naming it; `timeout` is honoured (seconds for Cline, milliseconds for Claude Code);
    `envFile` is read for admins only.

    Args:
        body (ServerImportRequest): mcp/server/import/req: the server list of a Claude Desktop /
            Claude Code / Cursor / Cline
            (`mcpServers`) or VS Code (`servers`) configuration, as it is in that file.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[ErrorBody | ServerImportResponse]
    """

    kwargs = _get_kwargs(
        body=body,
    )

    response = await client.get_async_httpx_client().request(**kwargs)

    return _build_response(client=client, response=response)


async def asyncio(
    *,
    client: AuthenticatedClient,
    body: ServerImportRequest,
) -> ErrorBody | ServerImportResponse | None:
    """Register the servers of a Claude Desktop / Claude Code / Cursor / Cline (`mcpServers`) or VS
    Code (`servers`) configuration as it is: each key becomes a `server_id`, and the answer says per
    server what happened (a bad entry does not stop the others). A server already registered
    under the same id with another config is replaced only with `replace: true`; `disabled`
    entries are `skipped`; an entry with an editor variable (`${input:…}`, `${workspaceFolder}`)
    fails naming it; `timeout` is honoured (seconds for Cline, milliseconds for Claude Code);
    `envFile` is read for admins only.

    Args:
        body (ServerImportRequest): mcp/server/import/req: the server list of a Claude Desktop /
            Claude Code / Cursor / Cline
            (`mcpServers`) or VS Code (`servers`) configuration, as it is in that file.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        ErrorBody | ServerImportResponse
    """

    return (
        await asyncio_detailed(
            client=client,
            body=body,
        )
    ).parsed
