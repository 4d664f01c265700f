from http import HTTPStatus
from typing import Any

import httpx

from ... import errors
from ...client import AuthenticatedClient, Client
from ...models.elicit_request import ElicitRequest
from ...models.error_body import ErrorBody
from ...models.roots_list_request import RootsListRequest
from ...models.sampling_request import SamplingRequest
from ...models.server_push import ServerPush
from ...types import UNSET, Response, Unset


def _get_kwargs(
    *,
    last_event_id: None | str | Unset = UNSET,
) -> dict[str, Any]:
    headers: dict[str, Any] = {}
    if not isinstance(last_event_id, Unset):
        headers["Last-Event-ID"] = last_event_id

    _kwargs: dict[str, Any] = {
        "method": "get",
        "url": "/v1/events",
    }

    _kwargs["headers"] = headers
    return _kwargs


def _parse_response(
    *, client: AuthenticatedClient | Client, response: httpx.Response
) -> ElicitRequest | RootsListRequest | SamplingRequest | ServerPush | ErrorBody | None:
    if response.status_code == 200:

        def _parse_response_200(
            data: object,
        ) -> ElicitRequest | RootsListRequest | SamplingRequest | ServerPush:
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                componentsschemas_stream_event_type_0 = ServerPush.from_dict(data)

                return componentsschemas_stream_event_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                componentsschemas_stream_event_type_1 = SamplingRequest.from_dict(data)

                return componentsschemas_stream_event_type_1
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                componentsschemas_stream_event_type_2 = RootsListRequest.from_dict(data)

                return componentsschemas_stream_event_type_2
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            if not isinstance(data, dict):
                raise TypeError()
            componentsschemas_stream_event_type_3 = ElicitRequest.from_dict(data)

            return componentsschemas_stream_event_type_3

        response_200 = _parse_response_200(response.text)

        return response_200

    if response.status_code == 401:
        response_401 = ErrorBody.from_dict(response.json())

        return response_401

    if response.status_code == 429:
        response_429 = ErrorBody.from_dict(response.json())

        return response_429

    if client.raise_on_unexpected_status:
        raise errors.UnexpectedStatus(response.status_code, response.content)
    else:
        return None


def _build_response(
    *, client: AuthenticatedClient | Client, response: httpx.Response
) -> Response[
    ElicitRequest | RootsListRequest | SamplingRequest | ServerPush | ErrorBody
]:
    return Response(
        status_code=HTTPStatus(response.status_code),
        content=response.content,
        headers=response.headers,
        parsed=_parse_response(client=client, response=response),
    )


def sync_detailed(
    *,
    client: AuthenticatedClient,
    last_event_id: None | str | Unset = UNSET,
) -> Response[
    ElicitRequest | RootsListRequest | SamplingRequest | ServerPush | ErrorBody
]:
    """This agent's event stream: pushes from servers and the requests they make of it. Several
    streams of one agent all get every event.

    Args:
        last_event_id (None | str | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[ElicitRequest | RootsListRequest | SamplingRequest | ServerPush | ErrorBody]
    """

    kwargs = _get_kwargs(
        last_event_id=last_event_id,
    )

    response = client.get_httpx_client().request(
        **kwargs,
    )

    return _build_response(client=client, response=response)


def sync(
    *,
    client: AuthenticatedClient,
    last_event_id: None | str | Unset = UNSET,
) -> ElicitRequest | RootsListRequest | SamplingRequest | ServerPush | ErrorBody | None:
    """This agent's event stream: pushes from servers and the requests they make of it. Several
    streams of one agent all get every event.

    Args:
        last_event_id (None | str | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        ElicitRequest | RootsListRequest | SamplingRequest | ServerPush | ErrorBody
    """

    return sync_detailed(
        client=client,
        last_event_id=last_event_id,
    ).parsed


async def asyncio_detailed(
    *,
    client: AuthenticatedClient,
    last_event_id: None | str | Unset = UNSET,
) -> Response[
    ElicitRequest | RootsListRequest | SamplingRequest | ServerPush | ErrorBody
]:
    """This agent's event stream: pushes from servers and the requests they make of it. Several
    streams of one agent all get every event.

    Args:
        last_event_id (None | str | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[ElicitRequest | RootsListRequest | SamplingRequest | ServerPush | ErrorBody]
    """

    kwargs = _get_kwargs(
        last_event_id=last_event_id,
    )

    response = await client.get_async_httpx_client().request(**kwargs)

    return _build_response(client=client, response=response)


async def asyncio(
    *,
    client: AuthenticatedClient,
    last_event_id: None | str | Unset = UNSET,
) -> ElicitRequest | RootsListRequest | SamplingRequest | ServerPush | ErrorBody | None:
    """This agent's event stream: pushes from servers and the requests they make of it. Several
    streams of one agent all get every event.

    Args:
        last_event_id (None | str | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        ElicitRequest | RootsListRequest | SamplingRequest | ServerPush | ErrorBody
    """

    return (
        await asyncio_detailed(
            client=client,
            last_event_id=last_event_id,
        )
    ).parsed
