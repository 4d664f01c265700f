from http import HTTPStatus
from typing import Any

import httpx

from ... import errors
from ...client import AuthenticatedClient, Client
from ...models.a2e_message_response_200 import A2EMessageResponse200
from ...models.a2e_message_response_201 import A2EMessageResponse201
from ...models.envelope import Envelope
from ...models.error_body import ErrorBody
from ...types import Response


def _get_kwargs(
    *,
    body: Envelope,
) -> dict[str, Any]:
    headers: dict[str, Any] = {}

    _kwargs: dict[str, Any] = {
        "method": "post",
        "url": "/v1/a2e",
    }

    _kwargs["json"] = body.to_dict()

    headers["Content-Type"] = "application/json"

    _kwargs["headers"] = headers
    return _kwargs


def _parse_response(
    *, client: AuthenticatedClient | Client, response: httpx.Response
) -> A2EMessageResponse200 | A2EMessageResponse201 | ErrorBody | None:
    if response.status_code == 200:
        response_200 = A2EMessageResponse200.from_dict(response.json())

        return response_200

    if response.status_code == 201:
        response_201 = A2EMessageResponse201.from_dict(response.json())

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

    if response.status_code == 404:
        response_404 = ErrorBody.from_dict(response.json())

        return response_404

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
) -> Response[A2EMessageResponse200 | A2EMessageResponse201 | ErrorBody]:
    return Response(
        status_code=HTTPStatus(response.status_code),
        content=response.content,
        headers=response.headers,
        parsed=_parse_response(client=client, response=response),
    )


def sync_detailed(
    *,
    client: AuthenticatedClient,
    body: Envelope,
) -> Response[A2EMessageResponse200 | A2EMessageResponse201 | ErrorBody]:
    """Send any A2E request message (`mcp/server/*`, `mcp/resource/*`, `mcp/prompt/*`,
    `mcp/completion/req`, `tool/list/req`, `tool/call/req`); the answer is its response message
    with the status its REST route would give.

    Args:
        body (Envelope): The wire message: its `type` picks the operation.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[A2EMessageResponse200 | A2EMessageResponse201 | ErrorBody]
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
    body: Envelope,
) -> A2EMessageResponse200 | A2EMessageResponse201 | ErrorBody | None:
    """Send any A2E request message (`mcp/server/*`, `mcp/resource/*`, `mcp/prompt/*`,
    `mcp/completion/req`, `tool/list/req`, `tool/call/req`); the answer is its response message
    with the status its REST route would give.

    Args:
        body (Envelope): The wire message: its `type` picks the operation.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        A2EMessageResponse200 | A2EMessageResponse201 | ErrorBody
    """

    return sync_detailed(
        client=client,
        body=body,
    ).parsed


async def asyncio_detailed(
    *,
    client: AuthenticatedClient,
    body: Envelope,
) -> Response[A2EMessageResponse200 | A2EMessageResponse201 | ErrorBody]:
    """Send any A2E request message (`mcp/server/*`, `mcp/resource/*`, `mcp/prompt/*`,
    `mcp/completion/req`, `tool/list/req`, `tool/call/req`); the answer is its response message
    with the status its REST route would give.

    Args:
        body (Envelope): The wire message: its `type` picks the operation.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[A2EMessageResponse200 | A2EMessageResponse201 | ErrorBody]
    """

    kwargs = _get_kwargs(
        body=body,
    )

    response = await client.get_async_httpx_client().request(**kwargs)

    return _build_response(client=client, response=response)


async def asyncio(
    *,
    client: AuthenticatedClient,
    body: Envelope,
) -> A2EMessageResponse200 | A2EMessageResponse201 | ErrorBody | None:
    """Send any A2E request message (`mcp/server/*`, `mcp/resource/*`, `mcp/prompt/*`,
    `mcp/completion/req`, `tool/list/req`, `tool/call/req`); the answer is its response message
    with the status its REST route would give.

    Args:
        body (Envelope): The wire message: its `type` picks the operation.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        A2EMessageResponse200 | A2EMessageResponse201 | ErrorBody
    """

    return (
        await asyncio_detailed(
            client=client,
            body=body,
        )
    ).parsed
