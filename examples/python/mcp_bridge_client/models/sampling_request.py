from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Self, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..models.sampling_request_type import (
    SamplingRequestType,
    check_sampling_request_type,
)

if TYPE_CHECKING:
    from ..models.sampling_request_messages_item import SamplingRequestMessagesItem
    from ..models.sampling_request_metadata import SamplingRequestMetadata
    from ..models.sampling_request_model_preferences import (
        SamplingRequestModelPreferences,
    )


T = TypeVar("T", bound="SamplingRequest")


@_attrs_define
class SamplingRequest:
    """mcp/sample/req: a server asks the agent for an LLM completion.

    Attributes:
        type_ (SamplingRequestType): The A2E message type. Default: 'mcp/sample/req'.
        id (str): Message id; a UUID when absent.
        version (str): A2E protocol version. Default: '1.0'. Example: 1.0.
        ts (float): Timestamp, seconds since the Unix epoch; now when absent.
        server_id (str):  Default: ''.
        mcp_request_id (str): The MCP JSON-RPC request id. Default: ''.
        messages (list[SamplingRequestMessagesItem]): Sampling messages, exactly as MCP defines them.
        model_preferences (SamplingRequestModelPreferences):
        system_prompt (str):  Default: ''.
        include_context (str): `none`, `thisServer` or `allServers`. Default: 'none'.
        temperature (float):  Default: 1.0.
        max_tokens (int):  Default: 1024.
        stop_sequences (list[str]):
        metadata (SamplingRequestMetadata):
    """

    id: str
    ts: float
    messages: list[SamplingRequestMessagesItem]
    model_preferences: SamplingRequestModelPreferences
    stop_sequences: list[str]
    metadata: SamplingRequestMetadata
    type_: SamplingRequestType = "mcp/sample/req"
    version: str = "1.0"
    server_id: str = ""
    mcp_request_id: str = ""
    system_prompt: str = ""
    include_context: str = "none"
    temperature: float = 1.0
    max_tokens: int = 1024
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        type_: str = self.type_

        id = self.id

        version = self.version

        ts = self.ts

        server_id = self.server_id

        mcp_request_id = self.mcp_request_id

        messages = []
        for messages_item_data in self.messages:
            messages_item = messages_item_data.to_dict()
            messages.append(messages_item)

        model_preferences = self.model_preferences.to_dict()

        system_prompt = self.system_prompt

        include_context = self.include_context

        temperature = self.temperature

        max_tokens = self.max_tokens

        stop_sequences = self.stop_sequences

        metadata = self.metadata.to_dict()

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "type": type_,
                "id": id,
                "version": version,
                "ts": ts,
                "server_id": server_id,
                "mcp_request_id": mcp_request_id,
                "messages": messages,
                "model_preferences": model_preferences,
                "system_prompt": system_prompt,
                "include_context": include_context,
                "temperature": temperature,
                "max_tokens": max_tokens,
                "stop_sequences": stop_sequences,
                "metadata": metadata,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        from ..models.sampling_request_messages_item import SamplingRequestMessagesItem
        from ..models.sampling_request_metadata import SamplingRequestMetadata
        from ..models.sampling_request_model_preferences import (
            SamplingRequestModelPreferences,
        )

        d = dict(src_dict)
        type_ = check_sampling_request_type(d.pop("type"))

        id = d.pop("id")

        version = d.pop("version")

        ts = d.pop("ts")

        server_id = d.pop("server_id")

        mcp_request_id = d.pop("mcp_request_id")

        messages = []
        _messages = d.pop("messages")
        for messages_item_data in _messages:
            messages_item = SamplingRequestMessagesItem.from_dict(messages_item_data)

            messages.append(messages_item)

        model_preferences = SamplingRequestModelPreferences.from_dict(
            d.pop("model_preferences")
        )

        system_prompt = d.pop("system_prompt")

        include_context = d.pop("include_context")

        temperature = d.pop("temperature")

        max_tokens = d.pop("max_tokens")

        stop_sequences = cast(list[str], d.pop("stop_sequences"))

        metadata = SamplingRequestMetadata.from_dict(d.pop("metadata"))

        sampling_request = cls(
            type_=type_,
            id=id,
            version=version,
            ts=ts,
            server_id=server_id,
            mcp_request_id=mcp_request_id,
            messages=messages,
            model_preferences=model_preferences,
            system_prompt=system_prompt,
            include_context=include_context,
            temperature=temperature,
            max_tokens=max_tokens,
            stop_sequences=stop_sequences,
            metadata=metadata,
        )

        sampling_request.additional_properties = d
        return sampling_request

    @property
    def additional_keys(self) -> list[str]:
        return list(self.additional_properties.keys())

    def __getitem__(self, key: str) -> Any:
        return self.additional_properties[key]

    def __setitem__(self, key: str, value: Any) -> None:
        self.additional_properties[key] = value

    def __delitem__(self, key: str) -> None:
        del self.additional_properties[key]

    def __contains__(self, key: str) -> bool:
        return key in self.additional_properties
