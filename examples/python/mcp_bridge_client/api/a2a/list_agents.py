from http import HTTPStatus
from typing import Any

import httpx

from ... import errors
from ...client import AuthenticatedClient, Client
from ...models.a2a_list_response import A2AListResponse
from ...models.error_body import ErrorBody
from ...types import UNSET, Response, Unset


def _get_kwargs(
    *,
    skill_tags: str | Unset = UNSET,
    id: str | Unset = UNSET,
) -> dict[str, Any]:

    params: dict[str, Any] = {}

    params["skill_tags"] = skill_tags

    params["id"] = id

    params = {k: v for k, v in params.items() if v is not UNSET and v is not None}

    _kwargs: dict[str, Any] = {
        "method": "get",
        "url": "/v1/a2a/agents",
        "params": params,
    }

    return _kwargs


def _parse_response(
    *, client: AuthenticatedClient | Client, response: httpx.Response
) -> A2AListResponse | ErrorBody | None:
    if response.status_code == 200:
        response_200 = A2AListResponse.from_dict(response.json())

        return response_200

    if response.status_code == 401:
        response_401 = ErrorBody.from_dict(response.json())

        return response_401

    if response.status_code == 429:
        response_429 = ErrorBody.from_dict(response.json())

        return response_429

    if response.status_code == 501:
        response_501 = ErrorBody.from_dict(response.json())

        return response_501

    if client.raise_on_unexpected_status:
        raise errors.UnexpectedStatus(response.status_code, response.content)
    else:
        return None


def _build_response(
    *, client: AuthenticatedClient | Client, response: httpx.Response
) -> Response[A2AListResponse | ErrorBody]:
    return Response(
        status_code=HTTPStatus(response.status_code),
        content=response.content,
        headers=response.headers,
        parsed=_parse_response(client=client, response=response),
    )


def sync_detailed(
    *,
    client: AuthenticatedClient,
    skill_tags: str | Unset = UNSET,
    id: str | Unset = UNSET,
) -> Response[A2AListResponse | ErrorBody]:
    """The registered A2A agents.

    Args:
        skill_tags (str | Unset):
        id (str | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[A2AListResponse | ErrorBody]
    """

    kwargs = _get_kwargs(
        skill_tags=skill_tags,
        id=id,
    )

    response = client.get_httpx_client().request(
        **kwargs,
    )

    return _build_response(client=client, response=response)


def sync(
    *,
    client: AuthenticatedClient,
    skill_tags: str | Unset = UNSET,
    id: str | Unset = UNSET,
) -> A2AListResponse | ErrorBody | None:
    """The registered A2A agents.

    Args:
        skill_tags (str | Unset):
        id (str | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        A2AListResponse | ErrorBody
    """

    return sync_detailed(
        client=client,
        skill_tags=skill_tags,
        id=id,
    ).parsed


async def asyncio_detailed(
    *,
    client: AuthenticatedClient,
    skill_tags: str | Unset = UNSET,
    id: str | Unset = UNSET,
) -> Response[A2AListResponse | ErrorBody]:
    """The registered A2A agents.

    Args:
        skill_tags (str | Unset):
        id (str | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[A2AListResponse | ErrorBody]
    """

    kwargs = _get_kwargs(
        skill_tags=skill_tags,
        id=id,
    )

    response = await client.get_async_httpx_client().request(**kwargs)

    return _build_response(client=client, response=response)


async def asyncio(
    *,
    client: AuthenticatedClient,
    skill_tags: str | Unset = UNSET,
    id: str | Unset = UNSET,
) -> A2AListResponse | ErrorBody | None:
    """The registered A2A agents.

    Args:
        skill_tags (str | Unset):
        id (str | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        A2AListResponse | ErrorBody
    """

    return (
        await asyncio_detailed(
            client=client,
            skill_tags=skill_tags,
            id=id,
        )
    ).parsed
