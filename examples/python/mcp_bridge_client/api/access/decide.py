from http import HTTPStatus
from typing import Any
from urllib.parse import quote

import httpx

from ... import errors
from ...client import AuthenticatedClient, Client
from ...models.approval_decided import ApprovalDecided
from ...models.approval_decision import ApprovalDecision
from ...models.error_body import ErrorBody
from ...types import Response


def _get_kwargs(
    task_id: str,
    *,
    body: ApprovalDecision,
) -> dict[str, Any]:
    headers: dict[str, Any] = {}

    _kwargs: dict[str, Any] = {
        "method": "post",
        "url": "/v1/approvals/{task_id}".format(
            task_id=quote(str(task_id), safe=""),
        ),
    }

    _kwargs["json"] = body.to_dict()

    headers["Content-Type"] = "application/json"

    _kwargs["headers"] = headers
    return _kwargs


def _parse_response(
    *, client: AuthenticatedClient | Client, response: httpx.Response
) -> ApprovalDecided | ErrorBody | None:
    if response.status_code == 200:
        response_200 = ApprovalDecided.from_dict(response.json())

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
) -> Response[ApprovalDecided | ErrorBody]:
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
    body: ApprovalDecision,
) -> Response[ApprovalDecided | ErrorBody]:
    """Decide on a held call (its policy's approvers). `approve` makes the call exactly once, with
    exactly the arguments held, as its caller: the answer is its task, now `working`, whose
    result the caller reads on `/v1/tasks/{task_id}`. `deny` ends the task `failed` with
    `forbidden` and the reason. Only the first decision counts: a second one, one naming other
    arguments (`args_sha256`), or one after the call's time ran out or its caller cancelled it
    is 409 and runs nothing. An agent cannot approve its own call (403), even as an approver.

    Args:
        task_id (str):
        body (ApprovalDecision): `POST /v1/approvals/{task_id}`.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[ApprovalDecided | ErrorBody]
    """

    kwargs = _get_kwargs(
        task_id=task_id,
        body=body,
    )

    response = client.get_httpx_client().request(
        **kwargs,
    )

    return _build_response(client=client, response=response)


def sync(
    task_id: str,
    *,
    client: AuthenticatedClient,
    body: ApprovalDecision,
) -> ApprovalDecided | ErrorBody | None:
    """Decide on a held call (its policy's approvers). `approve` makes the call exactly once, with
    exactly the arguments held, as its caller: the answer is its task, now `working`, whose
    result the caller reads on `/v1/tasks/{task_id}`. `deny` ends the task `failed` with
    `forbidden` and the reason. Only the first decision counts: a second one, one naming other
    arguments (`args_sha256`), or one after the call's time ran out or its caller cancelled it
    is 409 and runs nothing. An agent cannot approve its own call (403), even as an approver.

    Args:
        task_id (str):
        body (ApprovalDecision): `POST /v1/approvals/{task_id}`.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        ApprovalDecided | ErrorBody
    """

    return sync_detailed(
        task_id=task_id,
        client=client,
        body=body,
    ).parsed


async def asyncio_detailed(
    task_id: str,
    *,
    client: AuthenticatedClient,
    body: ApprovalDecision,
) -> Response[ApprovalDecided | ErrorBody]:
    """Decide on a held call (its policy's approvers). `approve` makes the call exactly once, with
    exactly the arguments held, as its caller: the answer is its task, now `working`, whose
    result the caller reads on `/v1/tasks/{task_id}`. `deny` ends the task `failed` with
    `forbidden` and the reason. Only the first decision counts: a second one, one naming other
    arguments (`args_sha256`), or one after the call's time ran out or its caller cancelled it
    is 409 and runs nothing. An agent cannot approve its own call (403), even as an approver.

    Args:
        task_id (str):
        body (ApprovalDecision): `POST /v1/approvals/{task_id}`.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[ApprovalDecided | ErrorBody]
    """

    kwargs = _get_kwargs(
        task_id=task_id,
        body=body,
    )

    response = await client.get_async_httpx_client().request(**kwargs)

    return _build_response(client=client, response=response)


async def asyncio(
    task_id: str,
    *,
    client: AuthenticatedClient,
    body: ApprovalDecision,
) -> ApprovalDecided | ErrorBody | None:
    """Decide on a held call (its policy's approvers). `approve` makes the call exactly once, with
    exactly the arguments held, as its caller: the answer is its task, now `working`, whose
    result the caller reads on `/v1/tasks/{task_id}`. `deny` ends the task `failed` with
    `forbidden` and the reason. Only the first decision counts: a second one, one naming other
    arguments (`args_sha256`), or one after the call's time ran out or its caller cancelled it
    is 409 and runs nothing. An agent cannot approve its own call (403), even as an approver.

    Args:
        task_id (str):
        body (ApprovalDecision): `POST /v1/approvals/{task_id}`.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        ApprovalDecided | ErrorBody
    """

    return (
        await asyncio_detailed(
            task_id=task_id,
            client=client,
            body=body,
        )
    ).parsed
