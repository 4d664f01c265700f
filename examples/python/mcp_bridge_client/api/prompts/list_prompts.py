from http import HTTPStatus
from typing import Any

import httpx

from ... import errors
from ...client import AuthenticatedClient, Client
from ...models.error_body import ErrorBody
from ...models.prompt_list_response import PromptListResponse
from ...types import UNSET, Response, Unset


def _get_kwargs(
    *,
    server_id: str | Unset = UNSET,
    cursor: str | Unset = UNSET,
    id: str | Unset = UNSET,
) -> dict[str, Any]:

    params: dict[str, Any] = {}

    params["server_id"] = server_id

    params["cursor"] = cursor

    params["id"] = id

    params = {k: v for k, v in params.items() if v is not UNSET and v is not None}

    _kwargs: dict[str, Any] = {
        "method": "get",
        "url": "/v1/prompts",
        "params": params,
    }

    return _kwargs


def _parse_response(
    *, client: AuthenticatedClient | Client, response: httpx.Response
) -> ErrorBody | PromptListResponse | None:
    if response.status_code == 200:
        response_200 = PromptListResponse.from_dict(response.json())

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
) -> Response[ErrorBody | PromptListResponse]:
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
    cursor: str | Unset = UNSET,
    id: str | Unset = UNSET,
) -> Response[ErrorBody | PromptListResponse]:
    """Prompts of every ready server, merged and paged (mcp/prompt/list).

    Args:
        server_id (str | Unset):
        cursor (str | Unset):
        id (str | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[ErrorBody | PromptListResponse]
    """

    kwargs = _get_kwargs(
        server_id=server_id,
        cursor=cursor,
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
    cursor: str | Unset = UNSET,
    id: str | Unset = UNSET,
) -> ErrorBody | PromptListResponse | None:
    """Prompts of every ready server, merged and paged (mcp/prompt/list).

    Args:
        server_id (str | Unset):
        cursor (str | Unset):
        id (str | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        ErrorBody | PromptListResponse
    """

    return sync_detailed(
        client=client,
        server_id=server_id,
        cursor=cursor,
        id=id,
    ).parsed


async def asyncio_detailed(
    *,
    client: AuthenticatedClient,
    server_id: str | Unset = UNSET,
    cursor: str | Unset = UNSET,
    id: str | Unset = UNSET,
) -> Response[ErrorBody | PromptListResponse]:
    """Prompts of every ready server, merged and paged (mcp/prompt/list).

    Args:
        server_id (str | Unset):
        cursor (str | Unset):
        id (str | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[ErrorBody | PromptListResponse]
    """

    kwargs = _get_kwargs(
        server_id=server_id,
        cursor=cursor,
        id=id,
    )

    response = await client.get_async_httpx_client().request(**kwargs)

    return _build_response(client=client, response=response)


async def asyncio(
    *,
    client: AuthenticatedClient,
    server_id: str | Unset = UNSET,
    cursor: str | Unset = UNSET,
    id: str | Unset = UNSET,
) -> ErrorBody | PromptListResponse | None:
    """Prompts of every ready server, merged and paged (mcp/prompt/list).

    Args:
        server_id (str | Unset):
        cursor (str | Unset):
        id (str | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        ErrorBody | PromptListResponse
    """

    return (
        await asyncio_detailed(
            client=client,
            server_id=server_id,
            cursor=cursor,
            id=id,
        )
    ).parsed
