from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Self, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field

if TYPE_CHECKING:
    from ..models.named_toolset import NamedToolset


T = TypeVar("T", bound="ToolsetList")


@_attrs_define
class ToolsetList:
    """`GET /v1/toolsets`.

    Attributes:
        toolsets (list[NamedToolset]): By name.
    """

    toolsets: list[NamedToolset]
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        toolsets = []
        for toolsets_item_data in self.toolsets:
            toolsets_item = toolsets_item_data.to_dict()
            toolsets.append(toolsets_item)

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "toolsets": toolsets,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        from ..models.named_toolset import NamedToolset

        d = dict(src_dict)
        toolsets = []
        _toolsets = d.pop("toolsets")
        for toolsets_item_data in _toolsets:
            toolsets_item = NamedToolset.from_dict(toolsets_item_data)

            toolsets.append(toolsets_item)

        toolset_list = cls(
            toolsets=toolsets,
        )

        toolset_list.additional_properties = d
        return toolset_list

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
