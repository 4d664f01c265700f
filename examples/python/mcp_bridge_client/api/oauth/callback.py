from http import HTTPStatus
from typing import Any

import httpx

from ... import errors
from ...client import AuthenticatedClient, Client
from ...types import UNSET, Response, Unset


def _get_kwargs(
    *,
    state: str | Unset = UNSET,
    code: str | Unset = UNSET,
    iss: str | Unset = UNSET,
    error: str | Unset = UNSET,
    error_description: str | Unset = UNSET,
) -> dict[str, Any]:

    params: dict[str, Any] = {}

    params["state"] = state

    params["code"] = code

    params["iss"] = iss

    params["error"] = error

    params["error_description"] = error_description

    params = {k: v for k, v in params.items() if v is not UNSET and v is not None}

    _kwargs: dict[str, Any] = {
        "method": "get",
        "url": "/oauth/callback",
        "params": params,
    }

    return _kwargs


def _parse_response(
    *, client: AuthenticatedClient | Client, response: httpx.Response
) -> str | None:
    if response.status_code == 200:
        response_200 = response.text
        return response_200

    if response.status_code == 400:
        response_400 = response.text
        return response_400

    if response.status_code == 502:
        response_502 = response.text
        return response_502

    if client.raise_on_unexpected_status:
        raise errors.UnexpectedStatus(response.status_code, response.content)
    else:
        return None


def _build_response(
    *, client: AuthenticatedClient | Client, response: httpx.Response
) -> Response[str]:
    return Response(
        status_code=HTTPStatus(response.status_code),
        content=response.content,
        headers=response.headers,
        parsed=_parse_response(client=client, response=response),
    )


def sync_detailed(
    *,
    client: AuthenticatedClient | Client,
    state: str | Unset = UNSET,
    code: str | Unset = UNSET,
    iss: str | Unset = UNSET,
    error: str | Unset = UNSET,
    error_description: str | Unset = UNSET,
) -> Response[str]:
    """Where the authorization server sends the person back: exchanges the code for tokens and
    connects the server. Bound to the authorization's `state`, each one works once. Answers a
    short text page for the person.

    Args:
        state (str | Unset):
        code (str | Unset):
        iss (str | Unset):
        error (str | Unset):
        error_description (str | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[str]
    """

    kwargs = _get_kwargs(
        state=state,
        code=code,
        iss=iss,
        error=error,
        error_description=error_description,
    )

    response = client.get_httpx_client().request(
        **kwargs,
    )

    return _build_response(client=client, response=response)


def sync(
    *,
    client: AuthenticatedClient | Client,
    state: str | Unset = UNSET,
    code: str | Unset = UNSET,
    iss: str | Unset = UNSET,
    error: str | Unset = UNSET,
    error_description: str | Unset = UNSET,
) -> str | None:
    """Where the authorization server sends the person back: exchanges the code for tokens and
    connects the server. Bound to the authorization's `state`, each one works once. Answers a
    short text page for the person.

    Args:
        state (str | Unset):
        code (str | Unset):
        iss (str | Unset):
        error (str | Unset):
        error_description (str | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        str
    """

    return sync_detailed(
        client=client,
        state=state,
        code=code,
        iss=iss,
        error=error,
        error_description=error_description,
    ).parsed


async def asyncio_detailed(
    *,
    client: AuthenticatedClient | Client,
    state: str | Unset = UNSET,
    code: str | Unset = UNSET,
    iss: str | Unset = UNSET,
    error: str | Unset = UNSET,
    error_description: str | Unset = UNSET,
) -> Response[str]:
    """Where the authorization server sends the person back: exchanges the code for tokens and
    connects the server. Bound to the authorization's `state`, each one works once. Answers a
    short text page for the person.

    Args:
        state (str | Unset):
        code (str | Unset):
        iss (str | Unset):
        error (str | Unset):
        error_description (str | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[str]
    """

    kwargs = _get_kwargs(
        state=state,
        code=code,
        iss=iss,
        error=error,
        error_description=error_description,
    )

    response = await client.get_async_httpx_client().request(**kwargs)

    return _build_response(client=client, response=response)


async def asyncio(
    *,
    client: AuthenticatedClient | Client,
    state: str | Unset = UNSET,
    code: str | Unset = UNSET,
    iss: str | Unset = UNSET,
    error: str | Unset = UNSET,
    error_description: str | Unset = UNSET,
) -> str | None:
    """Where the authorization server sends the person back: exchanges the code for tokens and
    connects the server. Bound to the authorization's `state`, each one works once. Answers a
    short text page for the person.

    Args:
        state (str | Unset):
        code (str | Unset):
        iss (str | Unset):
        error (str | Unset):
        error_description (str | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        str
    """

    return (
        await asyncio_detailed(
            client=client,
            state=state,
            code=code,
            iss=iss,
            error=error,
            error_description=error_description,
        )
    ).parsed
