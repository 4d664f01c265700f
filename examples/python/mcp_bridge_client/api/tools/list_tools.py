from http import HTTPStatus
from typing import Any

import httpx

from ... import errors
from ...client import AuthenticatedClient, Client
from ...models.error_body import ErrorBody
from ...models.tool_list_response import ToolListResponse
from ...types import UNSET, Response, Unset


def _get_kwargs(
    *,
    server_id: str | Unset = UNSET,
    source: str | Unset = UNSET,
    cursor: str | Unset = UNSET,
    toolset: str | Unset = UNSET,
    q: str | Unset = UNSET,
    limit: int | Unset = UNSET,
    include: str | Unset = UNSET,
    id: str | Unset = UNSET,
) -> dict[str, Any]:

    params: dict[str, Any] = {}

    params["server_id"] = server_id

    params["source"] = source

    params["cursor"] = cursor

    params["toolset"] = toolset

    params["q"] = q

    params["limit"] = limit

    params["include"] = include

    params["id"] = id

    params = {k: v for k, v in params.items() if v is not UNSET and v is not None}

    _kwargs: dict[str, Any] = {
        "method": "get",
        "url": "/v1/tools",
        "params": params,
    }

    return _kwargs


def _parse_response(
    *, client: AuthenticatedClient | Client, response: httpx.Response
) -> ErrorBody | ToolListResponse | None:
    if response.status_code == 200:
        response_200 = ToolListResponse.from_dict(response.json())

        return response_200

    if response.status_code == 401:
        response_401 = ErrorBody.from_dict(response.json())

        return response_401

    if response.status_code == 404:
        response_404 = ErrorBody.from_dict(response.json())

        return response_404

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
) -> Response[ErrorBody | ToolListResponse]:
    return Response(
        status_code=HTTPStatus(response.status_code),
        content=response.content,
        headers=response.headers,
        parsed=_parse_response(client=client, response=response),
    )


def sync_detailed(
    *,
    client: AuthenticatedClient,
    server_id: str | Unset = UNSET,
    source: str | Unset = UNSET,
    cursor: str | Unset = UNSET,
    toolset: str | Unset = UNSET,
    q: str | Unset = UNSET,
    limit: int | Unset = UNSET,
    include: str | Unset = UNSET,
    id: str | Unset = UNSET,
) -> Response[ErrorBody | ToolListResponse]:
    """The catalogue: every ready server's tools as `{server_id}__{tool}` after its allow list
    and the caller's access policies (tool/list), in pages; or one toolset's tools; or, with
    `q`, the tools that best match a query, ranked.

    Args:
        server_id (str | Unset):
        source (str | Unset):
        cursor (str | Unset):
        toolset (str | Unset):
        q (str | Unset):
        limit (int | Unset):
        include (str | Unset):
        id (str | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[ErrorBody | ToolListResponse]
    """

    kwargs = _get_kwargs(
        server_id=server_id,
        source=source,
        cursor=cursor,
        toolset=toolset,
        q=q,
        limit=limit,
        include=include,
        id=id,
    )

    response = client.get_httpx_client().request(
        **kwargs,
    )

    return _build_response(client=client, response=response)


def sync(
    *,
    client: AuthenticatedClient,
    server_id: str | Unset = UNSET,
    source: str | Unset = UNSET,
    cursor: str | Unset = UNSET,
    toolset: str | Unset = UNSET,
    q: str | Unset = UNSET,
    limit: int | Unset = UNSET,
    include: str | Unset = UNSET,
    id: str | Unset = UNSET,
) -> ErrorBody | ToolListResponse | None:
    """The catalogue: every ready server's tools as `{server_id}__{tool}` after its allow list
    and the caller's access policies (tool/list), in pages; or one toolset's tools; or, with
    `q`, the tools that best match a query, ranked.

    Args:
        server_id (str | Unset):
        source (str | Unset):
        cursor (str | Unset):
        toolset (str | Unset):
        q (str | Unset):
        limit (int | Unset):
        include (str | Unset):
        id (str | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        ErrorBody | ToolListResponse
    """

    return sync_detailed(
        client=client,
        server_id=server_id,
        source=source,
        cursor=cursor,
        toolset=toolset,
        q=q,
        limit=limit,
        include=include,
        id=id,
    ).parsed


async def asyncio_detailed(
    *,
    client: AuthenticatedClient,
    server_id: str | Unset = UNSET,
    source: str | Unset = UNSET,
    cursor: str | Unset = UNSET,
    toolset: str | Unset = UNSET,
    q: str | Unset = UNSET,
    limit: int | Unset = UNSET,
    include: str | Unset = UNSET,
    id: str | Unset = UNSET,
) -> Response[ErrorBody | ToolListResponse]:
    """The catalogue: every ready server's tools as `{server_id}__{tool}` after its allow list
    and the caller's access policies (tool/list), in pages; or one toolset's tools; or, with
    `q`, the tools that best match a query, ranked.

    Args:
        server_id (str | Unset):
        source (str | Unset):
        cursor (str | Unset):
        toolset (str | Unset):
        q (str | Unset):
        limit (int | Unset):
        include (str | Unset):
        id (str | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[ErrorBody | ToolListResponse]
    """

    kwargs = _get_kwargs(
        server_id=server_id,
        source=source,
        cursor=cursor,
        toolset=toolset,
        q=q,
        limit=limit,
        include=include,
        id=id,
    )

    response = await client.get_async_httpx_client().request(**kwargs)

    return _build_response(client=client, response=response)


async def asyncio(
    *,
    client: AuthenticatedClient,
    server_id: str | Unset = UNSET,
    source: str | Unset = UNSET,
    cursor: str | Unset = UNSET,
    toolset: str | Unset = UNSET,
    q: str | Unset = UNSET,
    limit: int | Unset = UNSET,
    include: str | Unset = UNSET,
    id: str | Unset = UNSET,
) -> ErrorBody | ToolListResponse | None:
    """The catalogue: every ready server's tools as `{server_id}__{tool}` after its allow list
    and the caller's access policies (tool/list), in pages; or one toolset's tools; or, with
    `q`, the tools that best match a query, ranked.

    Args:
        server_id (str | Unset):
        source (str | Unset):
        cursor (str | Unset):
        toolset (str | Unset):
        q (str | Unset):
        limit (int | Unset):
        include (str | Unset):
        id (str | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        ErrorBody | ToolListResponse
    """

    return (
        await asyncio_detailed(
            client=client,
            server_id=server_id,
            source=source,
            cursor=cursor,
            toolset=toolset,
            q=q,
            limit=limit,
            include=include,
            id=id,
        )
    ).parsed
