from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Self, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.completion_context_arguments import CompletionContextArguments


T = TypeVar("T", bound="CompletionContext")


@_attrs_define
class CompletionContext:
    """Arguments already filled in, which a server may use to narrow its suggestions.

    Attributes:
        arguments (CompletionContextArguments | Unset):
    """

    arguments: CompletionContextArguments | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        arguments: dict[str, Any] | Unset = UNSET
        if not isinstance(self.arguments, Unset):
            arguments = self.arguments.to_dict()

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({})
        if arguments is not UNSET:
            field_dict["arguments"] = arguments

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        from ..models.completion_context_arguments import CompletionContextArguments

        d = dict(src_dict)
        _arguments = d.pop("arguments", UNSET)
        arguments: CompletionContextArguments | Unset
        if isinstance(_arguments, Unset):
            arguments = UNSET
        else:
            arguments = CompletionContextArguments.from_dict(_arguments)

        completion_context = cls(
            arguments=arguments,
        )

        completion_context.additional_properties = d
        return completion_context

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
