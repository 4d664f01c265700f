from http import HTTPStatus
from typing import Any
from urllib.parse import quote

import httpx

from ... import errors
from ...client import AuthenticatedClient, Client
from ...models.error_body import ErrorBody
from ...models.task_get_response import TaskGetResponse
from ...models.tool_call_response import ToolCallResponse
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
        "method": "get",
        "url": "/v1/tasks/{task_id}/result".format(
            task_id=quote(str(task_id), safe=""),
        ),
        "params": params,
    }

    return _kwargs


def _parse_response(
    *, client: AuthenticatedClient | Client, response: httpx.Response
) -> ErrorBody | TaskGetResponse | ToolCallResponse | None:
    if response.status_code == 200:
        response_200 = ToolCallResponse.from_dict(response.json())

        return response_200

    if response.status_code == 202:
        response_202 = TaskGetResponse.from_dict(response.json())

        return response_202

    if response.status_code == 401:
        response_401 = ErrorBody.from_dict(response.json())

        return response_401

    if response.status_code == 404:
        response_404 = ErrorBody.from_dict(response.json())

        return response_404

    if response.status_code == 409:
        response_409 = ErrorBody.from_dict(response.json())

        return response_409

    if response.status_code == 422:
        response_422 = ErrorBody.from_dict(response.json())

        return response_422

    if response.status_code == 429:
        response_429 = ErrorBody.from_dict(response.json())

        return response_429

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
) -> Response[ErrorBody | TaskGetResponse | ToolCallResponse]:
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
) -> Response[ErrorBody | TaskGetResponse | ToolCallResponse]:
    """The task's result (task/result): once `completed`, the `tool/call/resp` the call made (200,
    `is_error: true` included); while `working` or `input_required`, 202 with the task; once
    `failed`, the error the call failed with, with its status (a call the bridge was running when
    it restarted: 503 `mcp_server_unavailable`, "interrupted by restart"); once `cancelled`, 409.

    Args:
        task_id (str):
        id (str | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[ErrorBody | TaskGetResponse | ToolCallResponse]
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
) -> ErrorBody | TaskGetResponse | ToolCallResponse | None:
    """The task's result (task/result): once `completed`, the `tool/call/resp` the call made (200,
    `is_error: true` included); while `working` or `input_required`, 202 with the task; once
    `failed`, the error the call failed with, with its status (a call the bridge was running when
    it restarted: 503 `mcp_server_unavailable`, "interrupted by restart"); once `cancelled`, 409.

    Args:
        task_id (str):
        id (str | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        ErrorBody | TaskGetResponse | ToolCallResponse
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
) -> Response[ErrorBody | TaskGetResponse | ToolCallResponse]:
    """The task's result (task/result): once `completed`, the `tool/call/resp` the call made (200,
    `is_error: true` included); while `working` or `input_required`, 202 with the task; once
    `failed`, the error the call failed with, with its status (a call the bridge was running when
    it restarted: 503 `mcp_server_unavailable`, "interrupted by restart"); once `cancelled`, 409.

    Args:
        task_id (str):
        id (str | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[ErrorBody | TaskGetResponse | ToolCallResponse]
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
) -> ErrorBody | TaskGetResponse | ToolCallResponse | None:
    """The task's result (task/result): once `completed`, the `tool/call/resp` the call made (200,
    `is_error: true` included); while `working` or `input_required`, 202 with the task; once
    `failed`, the error the call failed with, with its status (a call the bridge was running when
    it restarted: 503 `mcp_server_unavailable`, "interrupted by restart"); once `cancelled`, 409.

    Args:
        task_id (str):
        id (str | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        ErrorBody | TaskGetResponse | ToolCallResponse
    """

    return (
        await asyncio_detailed(
            task_id=task_id,
            client=client,
            id=id,
        )
    ).parsed
