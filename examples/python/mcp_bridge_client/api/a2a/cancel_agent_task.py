from http import HTTPStatus
from typing import Any
from urllib.parse import quote

import httpx

from ... import errors
from ...client import AuthenticatedClient, Client
from ...models.a2a_task_cancel_response import A2ATaskCancelResponse
from ...models.error_body import ErrorBody
from ...types import UNSET, Response, Unset


def _get_kwargs(
    agent_id: str,
    task_id: str,
    *,
    id: str | Unset = UNSET,
) -> dict[str, Any]:

    params: dict[str, Any] = {}

    params["id"] = id

    params = {k: v for k, v in params.items() if v is not UNSET and v is not None}

    _kwargs: dict[str, Any] = {
        "method": "post",
        "url": "/v1/a2a/agents/{agent_id}/tasks/{task_id}/cancel".format(
            agent_id=quote(str(agent_id), safe=""),
            task_id=quote(str(task_id), safe=""),
        ),
        "params": params,
    }

    return _kwargs


def _parse_response(
    *, client: AuthenticatedClient | Client, response: httpx.Response
) -> A2ATaskCancelResponse | ErrorBody | None:
    if response.status_code == 200:
        response_200 = A2ATaskCancelResponse.from_dict(response.json())

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
) -> Response[A2ATaskCancelResponse | ErrorBody]:
    return Response(
        status_code=HTTPStatus(response.status_code),
        content=response.content,
        headers=response.headers,
        parsed=_parse_response(client=client, response=response),
    )


def sync_detailed(
    agent_id: str,
    task_id: str,
    *,
    client: AuthenticatedClient,
    id: str | Unset = UNSET,
) -> Response[A2ATaskCancelResponse | ErrorBody]:
    """Cancel an A2A task: only the agent whose call started it (through `agent_send` or
    `agent_query`) may. A task unknown to the agent or started by another caller is 404 alike;
    a task that is over already (completed, failed, rejected, cancelled) is 409. A streaming
    `agent_send` waiting on the task then ends with the cancelled task.

    Args:
        agent_id (str):
        task_id (str):
        id (str | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[A2ATaskCancelResponse | ErrorBody]
    """

    kwargs = _get_kwargs(
        agent_id=agent_id,
        task_id=task_id,
        id=id,
    )

    response = client.get_httpx_client().request(
        **kwargs,
    )

    return _build_response(client=client, response=response)


def sync(
    agent_id: str,
    task_id: str,
    *,
    client: AuthenticatedClient,
    id: str | Unset = UNSET,
) -> A2ATaskCancelResponse | ErrorBody | None:
    """Cancel an A2A task: only the agent whose call started it (through `agent_send` or
    `agent_query`) may. A task unknown to the agent or started by another caller is 404 alike;
    a task that is over already (completed, failed, rejected, cancelled) is 409. A streaming
    `agent_send` waiting on the task then ends with the cancelled task.

    Args:
        agent_id (str):
        task_id (str):
        id (str | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        A2ATaskCancelResponse | ErrorBody
    """

    return sync_detailed(
        agent_id=agent_id,
        task_id=task_id,
        client=client,
        id=id,
    ).parsed


async def asyncio_detailed(
    agent_id: str,
    task_id: str,
    *,
    client: AuthenticatedClient,
    id: str | Unset = UNSET,
) -> Response[A2ATaskCancelResponse | ErrorBody]:
    """Cancel an A2A task: only the agent whose call started it (through `agent_send` or
    `agent_query`) may. A task unknown to the agent or started by another caller is 404 alike;
    a task that is over already (completed, failed, rejected, cancelled) is 409. A streaming
    `agent_send` waiting on the task then ends with the cancelled task.

    Args:
        agent_id (str):
        task_id (str):
        id (str | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[A2ATaskCancelResponse | ErrorBody]
    """

    kwargs = _get_kwargs(
        agent_id=agent_id,
        task_id=task_id,
        id=id,
    )

    response = await client.get_async_httpx_client().request(**kwargs)

    return _build_response(client=client, response=response)


async def asyncio(
    agent_id: str,
    task_id: str,
    *,
    client: AuthenticatedClient,
    id: str | Unset = UNSET,
) -> A2ATaskCancelResponse | ErrorBody | None:
    """Cancel an A2A task: only the agent whose call started it (through `agent_send` or
    `agent_query`) may. A task unknown to the agent or started by another caller is 404 alike;
    a task that is over already (completed, failed, rejected, cancelled) is 409. A streaming
    `agent_send` waiting on the task then ends with the cancelled task.

    Args:
        agent_id (str):
        task_id (str):
        id (str | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        A2ATaskCancelResponse | ErrorBody
    """

    return (
        await asyncio_detailed(
            agent_id=agent_id,
            task_id=task_id,
            client=client,
            id=id,
        )
    ).parsed
