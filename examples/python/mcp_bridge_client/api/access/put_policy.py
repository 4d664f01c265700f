from http import HTTPStatus
from typing import Any
from urllib.parse import quote

import httpx

from ... import errors
from ...client import AuthenticatedClient, Client
from ...models.error_body import ErrorBody
from ...models.named_policy import NamedPolicy
from ...models.policy import Policy
from ...types import Response


def _get_kwargs(
    name: str,
    *,
    body: Policy,
) -> dict[str, Any]:
    headers: dict[str, Any] = {}

    _kwargs: dict[str, Any] = {
        "method": "put",
        "url": "/v1/policies/{name}".format(
            name=quote(str(name), safe=""),
        ),
    }

    _kwargs["json"] = body.to_dict()

    headers["Content-Type"] = "application/json"

    _kwargs["headers"] = headers
    return _kwargs


def _parse_response(
    *, client: AuthenticatedClient | Client, response: httpx.Response
) -> ErrorBody | NamedPolicy | None:
    if response.status_code == 200:
        response_200 = NamedPolicy.from_dict(response.json())

        return response_200

    if response.status_code == 201:
        response_201 = NamedPolicy.from_dict(response.json())

        return response_201

    if response.status_code == 400:
        response_400 = ErrorBody.from_dict(response.json())

        return response_400

    if response.status_code == 401:
        response_401 = ErrorBody.from_dict(response.json())

        return response_401

    if response.status_code == 403:
        response_403 = ErrorBody.from_dict(response.json())

        return response_403

    if response.status_code == 409:
        response_409 = ErrorBody.from_dict(response.json())

        return response_409

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
) -> Response[ErrorBody | NamedPolicy]:
    return Response(
        status_code=HTTPStatus(response.status_code),
        content=response.content,
        headers=response.headers,
        parsed=_parse_response(client=client, response=response),
    )


def sync_detailed(
    name: str,
    *,
    client: AuthenticatedClient,
    body: Policy,
) -> Response[ErrorBody | NamedPolicy]:
    """Create or replace a policy (admins). It applies to the callers its `match` names (every
    criterion given must hold); `allow` globs narrow what they see, `deny` globs hide (deny
    wins). Tools and prompts match by namespaced name (`github__*`), resources by URI. In force
    at once, on every replica within 2 s.

    Args:
        name (str):
        body (Policy): An access policy: whom it applies to, what it lets them see and what it
            hides. Deny wins;
            a policy with no `allow` only denies.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[ErrorBody | NamedPolicy]
    """

    kwargs = _get_kwargs(
        name=name,
        body=body,
    )

    response = client.get_httpx_client().request(
        **kwargs,
    )

    return _build_response(client=client, response=response)


def sync(
    name: str,
    *,
    client: AuthenticatedClient,
    body: Policy,
) -> ErrorBody | NamedPolicy | None:
    """Create or replace a policy (admins). It applies to the callers its `match` names (every
    criterion given must hold); `allow` globs narrow what they see, `deny` globs hide (deny
    wins). Tools and prompts match by namespaced name (`github__*`), resources by URI. In force
    at once, on every replica within 2 s.

    Args:
        name (str):
        body (Policy): An access policy: whom it applies to, what it lets them see and what it
            hides. Deny wins;
            a policy with no `allow` only denies.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        ErrorBody | NamedPolicy
    """

    return sync_detailed(
        name=name,
        client=client,
        body=body,
    ).parsed


async def asyncio_detailed(
    name: str,
    *,
    client: AuthenticatedClient,
    body: Policy,
) -> Response[ErrorBody | NamedPolicy]:
    """Create or replace a policy (admins). It applies to the callers its `match` names (every
    criterion given must hold); `allow` globs narrow what they see, `deny` globs hide (deny
    wins). Tools and prompts match by namespaced name (`github__*`), resources by URI. In force
    at once, on every replica within 2 s.

    Args:
        name (str):
        body (Policy): An access policy: whom it applies to, what it lets them see and what it
            hides. Deny wins;
            a policy with no `allow` only denies.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[ErrorBody | NamedPolicy]
    """

    kwargs = _get_kwargs(
        name=name,
        body=body,
    )

    response = await client.get_async_httpx_client().request(**kwargs)

    return _build_response(client=client, response=response)


async def asyncio(
    name: str,
    *,
    client: AuthenticatedClient,
    body: Policy,
) -> ErrorBody | NamedPolicy | None:
    """Create or replace a policy (admins). It applies to the callers its `match` names (every
    criterion given must hold); `allow` globs narrow what they see, `deny` globs hide (deny
    wins). Tools and prompts match by namespaced name (`github__*`), resources by URI. In force
    at once, on every replica within 2 s.

    Args:
        name (str):
        body (Policy): An access policy: whom it applies to, what it lets them see and what it
            hides. Deny wins;
            a policy with no `allow` only denies.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        ErrorBody | NamedPolicy
    """

    return (
        await asyncio_detailed(
            name=name,
            client=client,
            body=body,
        )
    ).parsed
