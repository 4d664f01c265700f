from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Self, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..models.a2a_binding import A2ABinding, check_a2a_binding
from ..models.a2a_protocol import A2AProtocol, check_a2a_protocol

if TYPE_CHECKING:
    from ..models.a2a_agent_info_card import A2AAgentInfoCard
    from ..models.a2a_agent_info_headers import A2AAgentInfoHeaders


T = TypeVar("T", bound="A2AAgentInfo")


@_attrs_define
class A2AAgentInfo:
    """A registered A2A agent (beyond the seed).

    Attributes:
        agent_id (str):  Default: ''.
        name (str):  Default: ''.
        description (str):  Default: ''.
        version (str):  Default: ''.
        url (str): Where its card was fetched from. Default: ''.
        endpoint (str): Where JSON-RPC goes, as its card says. Default: ''.
        protocol_version (A2AProtocol): The A2A protocol an agent speaks, as its card says (`protocol_version` of an A2A
            agent).
        binding (A2ABinding): How the bridge calls an A2A agent (`binding` of an A2A agent): the protocol binding of the
            card's interface it chose, named as cards name it (`protocolBinding`).
        skill_tags (list[str]):
        owner (str): The agent that registered it. Default: ''.
        headers (A2AAgentInfoHeaders): Headers sent to it (values shown as `***`).
        card (A2AAgentInfoCard): The agent card as last fetched.
    """

    protocol_version: A2AProtocol
    binding: A2ABinding
    skill_tags: list[str]
    headers: A2AAgentInfoHeaders
    card: A2AAgentInfoCard
    agent_id: str = ""
    name: str = ""
    description: str = ""
    version: str = ""
    url: str = ""
    endpoint: str = ""
    owner: str = ""
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        agent_id = self.agent_id

        name = self.name

        description = self.description

        version = self.version

        url = self.url

        endpoint = self.endpoint

        protocol_version: str = self.protocol_version

        binding: str = self.binding

        skill_tags = self.skill_tags

        owner = self.owner

        headers = self.headers.to_dict()

        card = self.card.to_dict()

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "agent_id": agent_id,
                "name": name,
                "description": description,
                "version": version,
                "url": url,
                "endpoint": endpoint,
                "protocol_version": protocol_version,
                "binding": binding,
                "skill_tags": skill_tags,
                "owner": owner,
                "headers": headers,
                "card": card,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        from ..models.a2a_agent_info_card import A2AAgentInfoCard
        from ..models.a2a_agent_info_headers import A2AAgentInfoHeaders

        d = dict(src_dict)
        agent_id = d.pop("agent_id")

        name = d.pop("name")

        description = d.pop("description")

        version = d.pop("version")

        url = d.pop("url")

        endpoint = d.pop("endpoint")

        protocol_version = check_a2a_protocol(d.pop("protocol_version"))

        binding = check_a2a_binding(d.pop("binding"))

        skill_tags = cast(list[str], d.pop("skill_tags"))

        owner = d.pop("owner")

        headers = A2AAgentInfoHeaders.from_dict(d.pop("headers"))

        card = A2AAgentInfoCard.from_dict(d.pop("card"))

        a2a_agent_info = cls(
            agent_id=agent_id,
            name=name,
            description=description,
            version=version,
            url=url,
            endpoint=endpoint,
            protocol_version=protocol_version,
            binding=binding,
            skill_tags=skill_tags,
            owner=owner,
            headers=headers,
            card=card,
        )

        a2a_agent_info.additional_properties = d
        return a2a_agent_info

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
