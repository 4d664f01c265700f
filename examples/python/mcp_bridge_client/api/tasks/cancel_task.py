from http import HTTPStatus
from typing import Any
from urllib.parse import quote

import httpx

from ... import errors
from ...client import AuthenticatedClient, Client
from ...models.error_body import ErrorBody
from ...models.task_cancel_response import TaskCancelResponse
from ...types import UNSET, Response, Unset


def _get_kwargs(
    task_id: str,
    *,
    id: str | Unset = UNSET,
) -> dict[str, Any]:

    params: dict[str, Any] = {}

    params["id"] = id

    params = {k: v for k, v in params.items() if v is not UNSET and v is not None}

    _kwargs: dict[str, Any] = {
        "method": "delete",
        "url": "/v1/tasks/{task_id}".format(
            task_id=quote(str(task_id), safe=""),
        ),
        "params": params,
    }

    return _kwargs


def _parse_response(
    *, client: AuthenticatedClient | Client, response: httpx.Response
) -> ErrorBody | TaskCancelResponse | None:
    if response.status_code == 200:
        response_200 = TaskCancelResponse.from_dict(response.json())

        return response_200

    if response.status_code == 401:
        response_401 = ErrorBody.from_dict(response.json())

        return response_401

    if response.status_code == 404:
        response_404 = ErrorBody.from_dict(response.json())

        return response_404

    if response.status_code == 409:
        response_409 = ErrorBody.from_dict(response.json())

        return response_409

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
) -> Response[ErrorBody | TaskCancelResponse]:
    return Response(
        status_code=HTTPStatus(response.status_code),
        content=response.content,
        headers=response.headers,
        parsed=_parse_response(client=client, response=response),
    )


def sync_detailed(
    task_id: str,
    *,
    client: AuthenticatedClient,
    id: str | Unset = UNSET,
) -> Response[ErrorBody | TaskCancelResponse]:
    """Cancels one of the caller's running tasks (task/cancel): its call is stopped. A task that
    has already finished (completed, failed, or cancelled before) is 409 `conflict` and stays
    as it was, so cancelling twice answers 409 the second time.

    Args:
        task_id (str):
        id (str | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[ErrorBody | TaskCancelResponse]
    """

    kwargs = _get_kwargs(
        task_id=task_id,
        id=id,
    )

    response = client.get_httpx_client().request(
        **kwargs,
    )

    return _build_response(client=client, response=response)


def sync(
    task_id: str,
    *,
    client: AuthenticatedClient,
    id: str | Unset = UNSET,
) -> ErrorBody | TaskCancelResponse | None:
    """Cancels one of the caller's running tasks (task/cancel): its call is stopped. A task that
    has already finished (completed, failed, or cancelled before) is 409 `conflict` and stays
    as it was, so cancelling twice answers 409 the second time.

    Args:
        task_id (str):
        id (str | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        ErrorBody | TaskCancelResponse
    """

    return sync_detailed(
        task_id=task_id,
        client=client,
        id=id,
    ).parsed


async def asyncio_detailed(
    task_id: str,
    *,
    client: AuthenticatedClient,
    id: str | Unset = UNSET,
) -> Response[ErrorBody | TaskCancelResponse]:
    """Cancels one of the caller's running tasks (task/cancel): its call is stopped. A task that
    has already finished (completed, failed, or cancelled before) is 409 `conflict` and stays
    as it was, so cancelling twice answers 409 the second time.

    Args:
        task_id (str):
        id (str | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[ErrorBody | TaskCancelResponse]
    """

    kwargs = _get_kwargs(
        task_id=task_id,
        id=id,
    )

    response = await client.get_async_httpx_client().request(**kwargs)

    return _build_response(client=client, response=response)


async def asyncio(
    task_id: str,
    *,
    client: AuthenticatedClient,
    id: str | Unset = UNSET,
) -> ErrorBody | TaskCancelResponse | None:
    """Cancels one of the caller's running tasks (task/cancel): its call is stopped. A task that
    has already finished (completed, failed, or cancelled before) is 409 `conflict` and stays
    as it was, so cancelling twice answers 409 the second time.

    Args:
        task_id (str):
        id (str | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        ErrorBody | TaskCancelResponse
    """

    return (
        await asyncio_detailed(
            task_id=task_id,
            client=client,
            id=id,
        )
    ).parsed
