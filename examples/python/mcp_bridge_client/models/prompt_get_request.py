from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Self, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..models.prompt_get_request_type import (
    PromptGetRequestType,
    check_prompt_get_request_type,
)
from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.prompt_get_request_arguments import PromptGetRequestArguments


T = TypeVar("T", bound="PromptGetRequest")


@_attrs_define
class PromptGetRequest:
    """mcp/prompt/get/req: render a prompt template.

    Attributes:
        name (str):
        type_ (PromptGetRequestType | Unset): The A2E message type. Default: 'mcp/prompt/get/req'.
        id (str | Unset): Message id; a UUID when absent.
        version (str | Unset): A2E protocol version. Default: '1.0'. Example: 1.0.
        ts (float | Unset): Timestamp, seconds since the Unix epoch; now when absent.
        arguments (PromptGetRequestArguments | Unset):
        server_id (str | Unset):  Default: ''.
    """

    name: str
    type_: PromptGetRequestType | Unset = "mcp/prompt/get/req"
    id: str | Unset = UNSET
    version: str | Unset = "1.0"
    ts: float | Unset = UNSET
    arguments: PromptGetRequestArguments | Unset = UNSET
    server_id: str | Unset = ""
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        name = self.name

        type_: str | Unset = UNSET
        if not isinstance(self.type_, Unset):
            type_ = self.type_

        id = self.id

        version = self.version

        ts = self.ts

        arguments: dict[str, Any] | Unset = UNSET
        if not isinstance(self.arguments, Unset):
            arguments = self.arguments.to_dict()

        server_id = self.server_id

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "name": name,
            }
        )
        if type_ is not UNSET:
            field_dict["type"] = type_
        if id is not UNSET:
            field_dict["id"] = id
        if version is not UNSET:
            field_dict["version"] = version
        if ts is not UNSET:
            field_dict["ts"] = ts
        if arguments is not UNSET:
            field_dict["arguments"] = arguments
        if server_id is not UNSET:
            field_dict["server_id"] = server_id

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        from ..models.prompt_get_request_arguments import PromptGetRequestArguments

        d = dict(src_dict)
        name = d.pop("name")

        _type_ = d.pop("type", UNSET)
        type_: PromptGetRequestType | Unset
        if isinstance(_type_, Unset):
            type_ = UNSET
        else:
            type_ = check_prompt_get_request_type(_type_)

        id = d.pop("id", UNSET)

        version = d.pop("version", UNSET)

        ts = d.pop("ts", UNSET)

        _arguments = d.pop("arguments", UNSET)
        arguments: PromptGetRequestArguments | Unset
        if isinstance(_arguments, Unset):
            arguments = UNSET
        else:
            arguments = PromptGetRequestArguments.from_dict(_arguments)

        server_id = d.pop("server_id", UNSET)

        prompt_get_request = cls(
            name=name,
            type_=type_,
            id=id,
            version=version,
            ts=ts,
            arguments=arguments,
            server_id=server_id,
        )

        prompt_get_request.additional_properties = d
        return prompt_get_request

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
