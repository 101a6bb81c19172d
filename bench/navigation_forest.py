"""The navigation benchmark's forest: a distributor's knowledge base, in English and Portuguese.

Acme Distribuidora sells fans, pumps, lamps and solar kits across six sales regions
of Brazil and one in the US. About seventy hand-written nodes carry the facts the
questions of ``navigation_questions.json`` ask about (people, regions, warehouses,
incidents, policies, products, datasets, meetings, projects, customers, runbooks),
linked by typed edges (a region to its manager and its warehouse, an incident to
its warehouse, a customer to its region, a project to its owner), so a question can
need two hops. Around them, seeded filler of the same kinds (product sheets,
weekly syncs, minor incidents, customers, notes) makes the forest over 300 nodes
and gives every search its distractors. ``build(root)`` plants it all with the real
Vine; the same seed gives the same forest, byte for byte.
"""
from __future__ import annotations

import random
from pathlib import Path
from typing import Any, Iterator

from monkeyllm_core import Vine, init_forest

SEED = 20261201
DAY = "2026-09-01"

BRANCHES = {
    "regions/_index": ("Regions", "Sales regions of Brazil and the US, with their managers and warehouses."),
    "people/_index": ("People", "Who is who: managers, leads and specialists, with roles and languages."),
    "operations/_index": ("Operations", "Warehouses, incidents and stock."),
    "operations/warehouses/_index": ("Warehouses", "Distribution centers and depots, one node each."),
    "operations/incidents/_index": ("Incidents", "Incident reports from the warehouses, 2026."),
    "policies/_index": ("Policies", "Company rules: returns, expenses, travel, leave, remote work, security."),
    "products/_index": ("Products", "Product sheets: fans, pumps, lamps, solar kits and more."),
    "products/catalog/_index": ("Catalog", "The long tail of the catalog: valves, hoses, filters, belts, sensors."),
    "sales/_index": ("Sales", "Sales data and price lists."),
    "sales/datasets/_index": ("Sales datasets", "Queryable sales tables: orders and prices of 2026."),
    "meetings/_index": ("Meetings", "Minutes of board, budget, sales and operations meetings."),
    "meetings/weekly/_index": ("Weekly syncs", "Weekly sales and operations sync notes, 2026."),
    "projects/_index": ("Projects", "Company projects: ERP, logistics, solar, fleet."),
    "clientes/_index": ("Clientes", "Perfis de clientes: setor, cidade e o que compram."),
    "it/_index": ("IT", "Runbooks and standards of the IT team."),
    "hr/_index": ("HR", "Onboarding, pay, training and headcount."),
    "notes/_index": ("Notas", "Notas avulsas da equipe."),
}


def _node(node_id: str, node_type: str, title: str, summary: str, body: str, **extra: Any) -> dict[str, Any]:
    fields = {"id": node_id, "type": node_type, "title": title, "summary": summary,
              "body": f"# {title}\n\n{body.strip()}\n", "created": "2026-01-15", "updated": DAY, "source": "manual"}
    fields.update(extra)
    return fields


def _links(*pairs: tuple[str, str]) -> list[dict[str, str]]:
    return [{"rel": rel, "target": target} for rel, target in pairs]


PEOPLE = [
    ("ana-ribeiro", "Ana Ribeiro", "Ana Ribeiro, head of the Sudeste sales region since 2024, based in São Paulo; speaks "
     "Portuguese, English and Spanish.",
     "## Background\n\nJoined from a logistics firm in 2019 as key account manager.\n\n## Outside work\n\n"
     "Runs marathons: finished Berlin in 2025 in 3h41.", "regions/sudeste"),
    ("kenji-tanaka", "Kenji Tanaka", "Kenji Tanaka, manager of the Norte region from Manaus; fluent in Japanese and "
     "Portuguese.", "## Background\n\nCame from the Tokyo trading office in 2023. Leads the river logistics of the "
     "Amazon routes.", "regions/norte"),
    ("olga-petrova", "Olga Petrova", "Olga Petrova, finance controller; owns the expense and travel rules and the 2026 "
     "budget.", "## Role\n\nWrote the expense policy and approves exceptions above the caps.\n\n## Languages\n\n"
     "Russian, English, some Portuguese.", None),
    ("samuel-okafor", "Samuel Okafor", "Samuel Okafor, IT lead; runs the helpdesk, the VPN and identity systems.",
     "## Role\n\nOwner of project Falcon. Before Acme he ran infrastructure for a bank in Lagos.", None),
    ("ines-moreira", "Inês Moreira", "Inês Moreira, gerente da região Sul, baseada em Curitiba; fala português e "
     "italiano.", "## Trajetória\n\nEntrou em 2021 vinda de uma cooperativa de Cascavel.", "regions/sul"),
    ("tomas-ferreira", "Tomás Ferreira", "Tomás Ferreira, coordenador de armazéns; responde pelos centros de Campinas, "
     "Recife e Manaus.", "## Rotina\n\nVisita cada centro uma vez por trimestre e aprova as escalas.", None),
    ("chloe-martin", "Chloé Martin", "Chloé Martin, product manager for industrial fans and pumps; French native.",
     "## Portfolio\n\nFX-3391, PB-110 and the new air curtains.", None),
    ("joao-silva", "João Silva", "João Silva, gerente da região Nordeste, em Recife; fala português e inglês.",
     "## Trajetória\n\nVendedor desde 2015, gerente desde 2022.", "regions/nordeste"),
    ("maria-conceicao", "Maria Conceição", "Maria Conceição, HR business partner; owns leave, vacation and hiring "
     "processes.", "## Role\n\nRuns the onboarding and the yearly salary review.", None),
    ("dana-reis", "Dana Reis", "Dana Reis, US East sales lead in Newark; bilingual in English and Portuguese.",
     "## Background\n\nOpened the US territory in 2025 with two 3PL accounts.", "regions/us-east"),
    ("pedro-alvares", "Pedro Álvares", "Pedro Álvares, gerente da região Centro-Oeste, em Goiânia.",
     "## Trajetória\n\nEx-agrônomo: trabalhou dez anos em lavouras de soja antes de entrar em vendas.",
     "regions/centro-oeste"),
    ("lucia-goncalves", "Lúcia Gonçalves", "Lúcia Gonçalves, legal counsel; reviews contracts and the supplier master "
     "agreements.", "## Role\n\nSigns off every agreement above 1 million BRL.", None),
]

REGIONS = [
    ("sudeste", "Sudeste", "Sales region Sudeste (São Paulo, Rio de Janeiro, Minas Gerais, Espírito Santo); the "
     "largest by revenue.", "## 2026\n\nClosed 812 orders in 2026, the most of any region, led by industrial fans.\n\n"
     "## Cities\n\nSão Paulo, Campinas, Rio de Janeiro, Belo Horizonte, Betim, Vitória.", "ana-ribeiro", "campinas"),
    ("sul", "Sul", "Região Sul: Paraná, Santa Catarina e Rio Grande do Sul; foco em agroindústria e cooperativas.",
     "## 2026\n\n344 pedidos fechados. Cidades: Curitiba, Cascavel, Joinville, Porto Alegre.", "ines-moreira", "curitiba"),
    ("nordeste", "Nordeste", "Região Nordeste, de Salvador a Fortaleza, atendida pelo centro de distribuição de Recife.",
     "## 2026\n\n190 pedidos fechados. Cidades: Recife, Salvador, Fortaleza, João Pessoa.", "joao-silva", "recife"),
    ("norte", "Norte", "Northern sales region: Amazonas and Pará, served by river barges.",
     "## 2026\n\n97 orders closed. Cities: Manaus, Belém, Santarém.", "kenji-tanaka", "manaus"),
    ("centro-oeste", "Centro-Oeste", "Região Centro-Oeste: Goiás, Mato Grosso e Distrito Federal; clientes do "
     "agronegócio.", "## 2026\n\n233 pedidos fechados. Cidades: Goiânia, Rio Verde, Cuiabá, Brasília.",
     "pedro-alvares", "goiania"),
    ("us-east", "US East", "US East sales territory: New York, New Jersey and Pennsylvania, opened in 2025.",
     "## 2026\n\n61 orders closed, mostly from third-party logistics companies.", "dana-reis", "newark"),
]

WAREHOUSES = [
    ("campinas", "Campinas distribution center", "Campinas distribution center: 18,000 m2, three shifts, serves the "
     "Sudeste region.", "## Site\n\nDock doors: 24. Coordinator: Tomás Ferreira.", "sudeste"),
    ("recife", "Centro de distribuição de Recife", "Centro de distribuição de Recife: 9.000 m2 perto do porto de Suape; "
     "atende o Nordeste.", "## Site\n\nDoze docas. Coordenador: Tomás Ferreira.", "nordeste"),
    ("manaus", "Manaus depot", "Manaus depot: river terminal with two barges, shipping to Amazonas and Pará.",
     "## Site\n\nBarges leave on Tuesdays and Fridays. Coordinator: Tomás Ferreira.", "norte"),
    ("curitiba", "Armazém de Curitiba", "Armazém de Curitiba: câmara fria e expedição para o Sul.",
     "## Site\n\nCâmara fria de 800 m2, mantida a 4 °C.", "sul"),
    ("goiania", "Goiânia warehouse", "Goiânia warehouse: bulk storage for the agricultural customers of the "
     "Centro-Oeste.", "## Site\n\nSilo-side bays for seed and fertiliser bags.", "centro-oeste"),
    ("newark", "Newark warehouse", "Newark warehouse in New Jersey: leased in 2025, cross-dock for US East orders.",
     "## Site\n\nLease renewed in March 2026 until 2029.", "us-east"),
]

INCIDENTS = [
    ("recife-flood-2026-03", "Recife, March 2026: rain damage", "Incident, March 2026: heavy rain put 40 cm of water "
     "inside the Recife distribution center; stock was moved up to the racks.",
     "## Timeline\n\nThe drains overflowed at 02:00. Damaged goods: 310 boxes of lamps.", "recife"),
    ("campinas-forklift-2026-02", "Campinas, February 2026: forklift collision", "Incident, February 2026: a forklift "
     "hit a rack in aisle 7 at Campinas; one operator bruised, no lost days.",
     "## Follow-up\n\nOperator recertified; speed limiters fitted.", "campinas"),
    ("manaus-barge-delay-2026-05", "Manaus, May 2026: barge delay", "Incident, May 2026: the low water level of the "
     "river held the Manaus barges back by nine days.", "## Impact\n\n41 orders to Pará shipped late.", "manaus"),
    ("newark-power-outage-2026-07", "Newark, July 2026: power outage", "Incident, July 2026: a four-hour power cut "
     "stopped the Newark cross-dock; the backup generator failed to start.",
     "## Follow-up\n\nGenerator battery replaced; monthly start test added.", "newark"),
    ("goiania-pest-2026-04", "Goiânia, abril de 2026: pragas", "Incidente, abril de 2026: infestação de carunchos em "
     "sacas de grãos no armazém de Goiânia.", "## Ação\n\nExpurgo com fosfina; 120 sacas descartadas.", "goiania"),
    ("curitiba-cold-room-2026-06", "Curitiba, junho de 2026: câmara fria", "Incidente, junho de 2026: a câmara fria "
     "de Curitiba ficou a 12 °C por seis horas; o lote foi descartado.",
     "## Causa\n\nCompressor travado; alarme sem bateria.", "curitiba"),
]

POLICIES = [
    ("exchange-policy", "Exchange policy", "Return and exchange windows per sales channel, with the invoice rules of "
     "each.", "## Retail\n\nRetail customers may return goods within 30 days of the invoice date, with the invoice.\n\n"
     "## Online\n\nOnline orders: 7 days from delivery, as the consumer code requires.\n\n## B2B\n\n"
     "Business customers need the account manager's approval and a credit note."),
    ("expense-policy", "Expense policy", "Reimbursement rules for travel, meals and equipment; receipts above 50 USD, "
     "approval by the team lead.", "## Meals\n\nUp to 80 USD a day; client dinners up to 120 USD a person.\n\n"
     "## Owner\n\nWritten and maintained by Olga Petrova, finance."),
    ("travel-policy", "Travel policy", "Booking rules for flights and hotels: economy under six hours, hotels up to "
     "180 USD a night.", "## Flights\n\nFlights over six hours may be booked in premium economy; business class needs "
     "a director's approval."),
    ("ferias", "Política de férias", "Política de férias: 30 dias por ano, divisíveis em até três períodos, com aviso "
     "de 30 dias.", "## Regras\n\nUm dos períodos deve ter pelo menos 14 dias corridos."),
    ("parental-leave", "Parental leave", "Parental leave: 120 days for birth mothers, 20 days for the other parent, "
     "adoption included.", "## Details\n\nThe 20 days may start up to a month after the birth."),
    ("remote-work", "Remote work", "Remote work rules: up to three home-office days a week and an equipment allowance "
     "of 500 BRL.", "## Eligibility\n\nWarehouse roles are on site."),
    ("gifts", "Gifts and hospitality", "Gifts and hospitality: accept nothing above 100 USD and log every gift from a "
     "supplier.", "## Examples\n\nWine, tickets, vouchers: log them; above the limit, return with thanks."),
    ("data-retention", "Data retention", "Data retention: invoices kept ten years, candidate CVs six months, access "
     "logs one year.", "## Deletion\n\nIT deletes expired records on the first Monday of each month."),
    ("passwords", "Password rules", "Password and MFA rules: at least 14 characters, changed only after a compromise, "
     "an authenticator app required.", "## MFA\n\nSMS codes are not accepted."),
]

PRODUCTS = [
    ("fx-3391-industrial-fan", "FX-3391 industrial fan", "FX-3391 industrial fan: 1.2 m blades, 18,000 m3/h airflow, "
     "for warehouses and barns.", "## Spares\n\nSpare part kit KP-7720: belts and bearings.\n\n## Buyers\n\n"
     "Metalúrgica Ferro Forte is the largest buyer."),
    ("pb-110-water-pump", "PB-110 water pump", "PB-110 submersible water pump, 2 HP, for irrigation and drainage.",
     "## Spares\n\nReplacement impeller IMP-5521."),
    ("ac-220-air-curtain", "AC-220 air curtain", "AC-220 air curtain for cold-room doors; keeps temperature losses "
     "under 20 percent.", "## Install\n\nMounted above doors up to 3 m wide."),
    ("lx-40-led-highbay", "LX-40 LED high-bay", "LX-40 LED high-bay lamp: 150 W, 21,000 lumens, IP65.",
     "## Mounting\n\nFor mounting heights of 8 to 14 m."),
    ("sp-900-solar-kit", "SP-900 solar kit", "SP-900 photovoltaic kit: 9 kWp rooftop set with inverter, sold to farms.",
     "## Buyers\n\nCooperativa Vale Verde buys them with PB-110 pumps."),
    ("dh-75-dehumidifier", "DH-75 dehumidifier", "DH-75 dehumidifier: 75 litres a day, for humid warehouses of the "
     "north.", "## Buyers\n\nHospital São Lucas has a maintenance contract."),
]

MEETINGS = [
    ("2026-03-board", "Board meeting, March 2026", "Board meeting, March 2026: approved the Falcon ERP rollout for Q2 "
     "and the renewal of the Newark lease.", "## Decisions\n\n1. Falcon goes live in Q2.\n2. Newark lease to 2029."),
    ("2026-05-ata-comercial", "Ata comercial, maio de 2026", "Ata da reunião comercial de maio de 2026: metas do "
     "segundo semestre e campanha de bombas de irrigação.",
     "## Metas\n\nCrescer 12% no segundo semestre. Pedido de compra PO-88213 aprovado para a campanha."),
    ("2026-06-ops-review", "Operations review, June 2026", "Operations review, June 2026: barge delays, the Curitiba "
     "cold-room loss and the forklift training plan.", "## Actions\n\nRetrain all operators by September."),
    ("2026-08-budget", "Budget meeting, August 2026", "Budget meeting, August 2026: 2027 capex capped at 4 million BRL; "
     "solar project Aurora funded.", "## Capex\n\nFour million reais for 2027, of which 1.5 million for Aurora."),
]

PROJECTS = [
    ("falcon", "Project Falcon", "Project Falcon: a cloud ERP replacing the old finance and stock system by the end of "
     "2026.", "## Owner\n\nSamuel Okafor, IT lead.", "samuel-okafor"),
    ("harbor", "Project Harbor", "Project Harbor: Recife imports moved from Suape to a bonded warehouse to cut customs "
     "time.", "## Status\n\nPilot with two containers a week.", "joao-silva"),
    ("aurora", "Projeto Aurora", "Projeto Aurora: painéis solares nos telhados dos armazéns de Goiânia e Campinas até "
     "2027.", "## Orçamento\n\n1,5 milhão de reais aprovados em agosto de 2026.", "pedro-alvares"),
    ("river-fleet", "River fleet renewal", "River fleet renewal: two new barges for the Manaus route, tender opened in "
     "June 2026.", "## Tender\n\nReference TR-2026-114, closing in October.", "kenji-tanaka"),
]

CLIENTES = [
    ("padaria-pao-dourado", "Padaria Pão Dourado", "Padaria Pão Dourado: rede de padarias em Curitiba; compra cortinas "
     "de ar e iluminação.", "sul"),
    ("ferro-forte", "Metalúrgica Ferro Forte", "Metalúrgica Ferro Forte: fundição em Betim (MG), maior cliente de "
     "ventiladores industriais.", "sudeste"),
    ("coop-vale-verde", "Cooperativa Vale Verde", "Cooperativa Vale Verde: cooperativa agrícola de Rio Verde (GO); compra "
     "kits solares e bombas.", "centro-oeste"),
    ("hospital-sao-lucas", "Hospital São Lucas", "Hospital São Lucas, em Salvador: contrato de desumidificadores e "
     "manutenção.", "nordeste"),
    ("acme-newark", "Acme Logistics", "Acme Logistics, Newark: third-party logistics customer of the US East territory "
     "since 2025.", "us-east"),
    ("frigorifico-norte", "Frigorífico Norte", "Frigorífico Norte, em Belém (PA): cortinas de ar e câmaras frias.",
     "norte"),
]

IT = [
    ("runbook-printer", "Label printer runbook", "Runbook for the warehouse label printers: queue resets and driver "
     "versions.", "## Errors\n\nError E-4471 means the spool is stuck: restart the print service, then clear the queue."),
    ("vpn-setup", "VPN setup", "Connecting a laptop or phone to the company VPN with the WireGuard profile.",
     "## Profiles\n\nUse profile wg-acme-01; ask the helpdesk for a key."),
    ("password-reset", "Password reset", "Resetting a forgotten password in the self-service portal, or through the "
     "helpdesk.", "## Helpdesk\n\nCall extension 4040, weekdays 8-18."),
    ("erp-error-codes", "ERP error codes", "ERP error codes and their fixes: posting, stock and tax errors.",
     "## Tax\n\nERR-TX-208: the item has no tax code; ask finance to assign one."),
    ("laptop-standard", "Laptop standard", "Standard laptop: 16 GB RAM, 512 GB SSD, replaced every four years.",
     "## Request\n\nOrdered by HR before the first day."),
]

HR = [
    ("onboarding", "Onboarding checklist", "Onboarding checklist for new hires: accounts, badge, safety training and a "
     "first-week buddy.", "## Day one\n\nLaptop, badge and the safety video."),
    ("salary-bands", "Salary bands 2026", "Salary bands 2026 per grade, with a yearly adjustment of 4.5 percent.",
     "## Review\n\nHeld in March by HR."),
    ("training-forklift", "Forklift certification", "Forklift operator certification: a 16-hour course, renewed every "
     "two years.", "## Provider\n\nSENAI, at the Campinas site."),
]


def core_nodes() -> Iterator[dict[str, Any]]:
    for slug, name, summary, body, region in PEOPLE:
        links = _links(("related-to", region)) if region else []
        yield _node(f"people/{slug}", "entity", name, summary, body, entity_kind="person", links=links)
    for slug, title, summary, body, manager, warehouse in REGIONS:
        yield _node(f"regions/{slug}", "entity", title, summary, body, entity_kind="region",
                    links=_links(("related-to", f"people/{manager}"),
                                 ("related-to", f"operations/warehouses/{warehouse}")))
    for slug, title, summary, body, region in WAREHOUSES:
        yield _node(f"operations/warehouses/{slug}", "entity", title, summary, body, entity_kind="place",
                    links=_links(("part-of", f"regions/{region}")))
    for slug, title, summary, body, warehouse in INCIDENTS:
        yield _node(f"operations/incidents/{slug}", "event", title, summary, body,
                    links=_links(("related-to", f"operations/warehouses/{warehouse}")))
    for slug, title, summary, body in POLICIES:
        yield _node(f"policies/{slug}", "note", title, summary, body)
    for slug, title, summary, body in PRODUCTS:
        yield _node(f"products/{slug}", "entity", title, summary, body, entity_kind="product")
    for slug, title, summary, body in MEETINGS:
        yield _node(f"meetings/{slug}", "event", title, summary, body)
    for slug, title, summary, body, owner in PROJECTS:
        yield _node(f"projects/{slug}", "concept", title, summary, body, links=_links(("author", f"people/{owner}")))
    for slug, title, summary, region in CLIENTES:
        yield _node(f"clientes/{slug}", "entity", title, summary, "## Conta\n\nCliente desde 2024.",
                    entity_kind="organisation", links=_links(("part-of", f"regions/{region}")))
    for slug, title, summary, body in IT:
        yield _node(f"it/{slug}", "note", title, summary, body)
    for slug, title, summary, body in HR:
        yield _node(f"hr/{slug}", "note", title, summary, body)


def datasets(rng: random.Random) -> Iterator[dict[str, Any]]:
    regions = [slug for slug, *_ in REGIONS]
    customers = [title for _, title, *_ in CLIENTES]
    orders = [[n, rng.choice(regions), rng.choice(customers), round(rng.uniform(800, 90000), 2),
               f"2026-{rng.randint(1, 8):02d}-{rng.randint(1, 28):02d}"] for n in range(1, 61)]
    yield _node("sales/datasets/orders-2026", "dataset", "Orders 2026", "Every closed order of 2026, one row per order, "
                "with region, customer and value.", "## Notes\n\ntotal_brl is in reais; US East amounts are converted "
                "at the month's average rate.",
                schema={"orders": {"columns": {"id": "INTEGER", "region": "TEXT", "customer": "TEXT",
                                               "total_brl": "REAL", "closed_on": "TEXT"}, "primary_key": ["id"]}},
                rows={"orders": orders})
    skus = [title.split()[0] for _, title, *_ in PRODUCTS]
    yield _node("sales/datasets/price-list-2026", "dataset", "Price list 2026", "Price list 2026: list and floor price "
                "per SKU, in BRL and USD.", "## Notes\n\nFloor prices are confidential: never send them to customers.",
                schema={"prices": {"columns": {"sku": "TEXT", "list_brl": "REAL", "floor_brl": "REAL",
                                               "list_usd": "REAL"}}},
                rows={"prices": [[sku, (p := round(rng.uniform(200, 9000), 2)), round(p * 0.8, 2), round(p / 5.1, 2)]
                                 for sku in skus]})
    warehouses = [slug for slug, *_ in WAREHOUSES]
    yield _node("operations/inventory", "dataset", "Inventory", "Stock on hand per warehouse and SKU, refreshed every "
                "Monday.", "## Notes\n\nQuantities are units, not boxes.",
                schema={"stock": {"columns": {"warehouse": "TEXT", "sku": "TEXT", "units": "INTEGER"}}},
                rows={"stock": [[w, s, rng.randint(0, 900)] for w in warehouses for s in skus]})
    departments = ["sales", "operations", "finance", "it", "hr", "legal"]
    yield _node("hr/headcount-2026", "dataset", "Headcount 2026", "Headcount per department and month, 2026.",
                "## Notes\n\nContractors are not counted.",
                schema={"headcount": {"columns": {"department": "TEXT", "month": "TEXT", "people": "INTEGER"}}},
                rows={"headcount": [[d, f"2026-{m:02d}", rng.randint(4, 120)] for d in departments for m in range(1, 9)]})


FILLER_KINDS = [("Valve", "VL", "brass, for water lines"), ("Hose", "HS", "reinforced rubber, for pumps"),
                ("Filter", "FT", "pleated cartridge, for air handlers"), ("Belt", "BT", "V-belt, for fans and conveyors"),
                ("Bearing", "BR", "sealed ball bearing, for motors"), ("Sensor", "SN", "temperature probe, for cold rooms"),
                ("Glove", "GL", "cut-resistant, for warehouse staff"), ("Pallet", "PL", "plastic pallet, 1.2 by 1.0 m"),
                ("Shelf", "SH", "steel shelving unit, 5 levels"), ("Conveyor", "CV", "roller conveyor section, 2 m")]
TOPICS = ["pricing of fans", "stock of pumps", "hiring two sales reps", "the label printer backlog", "late payments",
          "the trade fair in São Paulo", "new shelving at Campinas", "freight rates", "a customer complaint",
          "the website catalog", "the quarterly forecast", "training plans"]
MINOR = [("late truck", "a delivery truck arrived {n} hours late"), ("label misprint", "{n} boxes left with wrong labels"),
         ("damaged pallet", "a pallet of {n} boxes was dropped"), ("scanner failure", "{n} handheld scanners stopped"),
         ("missing paperwork", "{n} shipments left without the delivery note")]
SECTORS = [("Comércio", "loja de ferragens"), ("Indústria", "fábrica de móveis"), ("Transportes", "transportadora"),
           ("Agro", "fazenda de café"), ("Serviços", "empresa de limpeza"), ("Varejo", "supermercado")]
CITIES = [("São Paulo", "sudeste"), ("Campinas", "sudeste"), ("Joinville", "sul"), ("Porto Alegre", "sul"),
          ("Fortaleza", "nordeste"), ("João Pessoa", "nordeste"), ("Santarém", "norte"), ("Cuiabá", "centro-oeste"),
          ("Brasília", "centro-oeste"), ("Philadelphia", "us-east")]
NOTE_TOPICS = ["estacionamento", "café da manhã", "uniformes", "vagas de estágio", "festa de fim de ano", "coleta seletiva",
               "horário de verão", "manutenção do elevador", "novo refeitório", "campanha de vacinação"]


def filler(rng: random.Random) -> Iterator[dict[str, Any]]:
    names = [name for _, name, *_ in PEOPLE]
    for n in range(110):
        kind, prefix, what = FILLER_KINDS[n % len(FILLER_KINDS)]
        sku = f"{prefix}-{rng.randint(1000, 9999)}"
        yield _node(f"products/catalog/{prefix.lower()}-{n:03d}", "entity", f"{kind} {sku}",
                    f"{kind} {sku}: {what}, size {rng.randint(1, 9)}.",
                    f"## Specs\n\nWeight {rng.randint(1, 40)} kg; spare code {prefix}-S{rng.randint(100, 999)}.\n\n"
                    f"## Stock\n\nKept at {rng.choice(WAREHOUSES)[1]}.", entity_kind="product")
    for week in range(1, 61):
        topics = rng.sample(TOPICS, 3)
        yield _node(f"meetings/weekly/2026-w{week:02d}", "event", f"Weekly sync, week {week}",
                    f"Weekly sales and operations sync, week {week} of 2026: {topics[0]} and {topics[1]}.",
                    f"## Attendees\n\n{', '.join(rng.sample(names, 3))}.\n\n## Notes\n\nDiscussed {', '.join(topics)}.")
    for n in range(30):
        what, text = MINOR[n % len(MINOR)]
        place = rng.choice(WAREHOUSES)
        yield _node(f"operations/incidents/minor-{n:03d}", "event", f"{place[1]}: {what}",
                    f"Minor incident at {place[1]}: {text.format(n=rng.randint(2, 30))}.",
                    "## Follow-up\n\nNoted in the weekly sync.",
                    links=_links(("related-to", f"operations/warehouses/{place[0]}")))
    for n in range(30):
        sector, kind = SECTORS[n % len(SECTORS)]
        city, region = CITIES[rng.randrange(len(CITIES))]
        name = f"{sector} {rng.choice(['Aurora', 'Estrela', 'Horizonte', 'Boa Vista', 'Central', 'União'])} {n}"
        yield _node(f"clientes/cliente-{n:03d}", "entity", name, f"{name}: {kind} em {city}; compra peças de reposição.",
                    "## Conta\n\nCliente pequeno.", entity_kind="organisation",
                    links=_links(("part-of", f"regions/{region}")))
    for n, topic in enumerate(NOTE_TOPICS):
        yield _node(f"notes/nota-{n:02d}", "note", f"Nota: {topic}", f"Nota interna sobre {topic}, 2026.",
                    f"## Texto\n\nAviso da administração sobre {topic}.")


def build(root: Path) -> Path:
    """A fresh forest at ``root`` with every node of the benchmark."""
    root = init_forest(root, "Acme Distribuidora")
    rng = random.Random(SEED)
    with Vine(root) as vine, vine.bulk():
        for node_id, (title, summary) in BRANCHES.items():
            vine.plant({"id": node_id, "type": "branch", "title": title, "summary": summary})
        for node in [*core_nodes(), *datasets(rng), *filler(rng)]:
            vine.plant(node)
    return root
