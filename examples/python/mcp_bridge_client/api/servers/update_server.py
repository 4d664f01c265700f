from http import HTTPStatus
from typing import Any
from urllib.parse import quote

import httpx

from ... import errors
from ...client import AuthenticatedClient, Client
from ...models.error_body import ErrorBody
from ...models.server_update_request import ServerUpdateRequest
from ...models.server_update_response import ServerUpdateResponse
from ...types import Response


def _get_kwargs(
    server_id: str,
    *,
    body: ServerUpdateRequest,
) -> dict[str, Any]:
    headers: dict[str, Any] = {}

    _kwargs: dict[str, Any] = {
        "method": "patch",
        "url": "/v1/servers/{server_id}".format(
            server_id=quote(str(server_id), safe=""),
        ),
    }

    _kwargs["json"] = body.to_dict()

    headers["Content-Type"] = "application/json"

    _kwargs["headers"] = headers
    return _kwargs


def _parse_response(
    *, client: AuthenticatedClient | Client, response: httpx.Response
) -> ErrorBody | ServerUpdateResponse | None:
    if response.status_code == 200:
        response_200 = ServerUpdateResponse.from_dict(response.json())

        return response_200

    if response.status_code == 400:
        response_400 = ErrorBody.from_dict(response.json())

        return response_400

    if response.status_code == 401:
        response_401 = ErrorBody.from_dict(response.json())

        return response_401

    if response.status_code == 403:
        response_403 = ErrorBody.from_dict(response.json())

        return response_403

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

    if response.status_code == 503:
        response_503 = ErrorBody.from_dict(response.json())

        return response_503

    if client.raise_on_unexpected_status:
        raise errors.UnexpectedStatus(response.status_code, response.content)
    else:
        return None


def _build_response(
    *, client: AuthenticatedClient | Client, response: httpx.Response
) -> Response[ErrorBody | ServerUpdateResponse]:
    return Response(
        status_code=HTTPStatus(response.status_code),
        content=response.content,
        headers=response.headers,
        parsed=_parse_response(client=client, response=response),
    )


def sync_detailed(
    server_id: str,
    *,
    client: AuthenticatedClient,
    body: ServerUpdateRequest,
) -> Response[ErrorBody | ServerUpdateResponse]:
    """Change a server's config (mcp/server/update): allow lists, timeouts, headers, … A secret value
    sent as `***` keeps the stored one. Reconnects when the change concerns the connection.

    Args:
        server_id (str):
        body (ServerUpdateRequest): mcp/server/update/req: change some fields of a server's
            config. Absent fields stay as they
            are; a secret value given as `***` keeps the stored value.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[ErrorBody | ServerUpdateResponse]
    """

    kwargs = _get_kwargs(
        server_id=server_id,
        body=body,
    )

    response = client.get_httpx_client().request(
        **kwargs,
    )

    return _build_response(client=client, response=response)


def sync(
    server_id: str,
    *,
    client: AuthenticatedClient,
    body: ServerUpdateRequest,
) -> ErrorBody | ServerUpdateResponse | None:
    """Change a server's config (mcp/server/update): allow lists, timeouts, headers, … A secret value
    sent as `***` keeps the stored one. Reconnects when the change concerns the connection.

    Args:
        server_id (str):
        body (ServerUpdateRequest): mcp/server/update/req: change some fields of a server's
            config. Absent fields stay as they
            are; a secret value given as `***` keeps the stored value.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        ErrorBody | ServerUpdateResponse
    """

    return sync_detailed(
        server_id=server_id,
        client=client,
        body=body,
    ).parsed


async def asyncio_detailed(
    server_id: str,
    *,
    client: AuthenticatedClient,
    body: ServerUpdateRequest,
) -> Response[ErrorBody | ServerUpdateResponse]:
    """Change a server's config (mcp/server/update): allow lists, timeouts, headers, … A secret value
    sent as `***` keeps the stored one. Reconnects when the change concerns the connection.

    Args:
        server_id (str):
        body (ServerUpdateRequest): mcp/server/update/req: change some fields of a server's
            config. Absent fields stay as they
            are; a secret value given as `***` keeps the stored value.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[ErrorBody | ServerUpdateResponse]
    """

    kwargs = _get_kwargs(
        server_id=server_id,
        body=body,
    )

    response = await client.get_async_httpx_client().request(**kwargs)

    return _build_response(client=client, response=response)


async def asyncio(
    server_id: str,
    *,
    client: AuthenticatedClient,
    body: ServerUpdateRequest,
) -> ErrorBody | ServerUpdateResponse | None:
    """Change a server's config (mcp/server/update): allow lists, timeouts, headers, … A secret value
    sent as `***` keeps the stored one. Reconnects when the change concerns the connection.

    Args:
        server_id (str):
        body (ServerUpdateRequest): mcp/server/update/req: change some fields of a server's
            config. Absent fields stay as they
            are; a secret value given as `***` keeps the stored value.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        ErrorBody | ServerUpdateResponse
    """

    return (
        await asyncio_detailed(
            server_id=server_id,
            client=client,
            body=body,
        )
    ).parsed
