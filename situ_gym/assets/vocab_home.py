"""Invented Home Furnishings vocabulary: seven stores, their display areas and product lines.

Product ``i`` of a category gets model name ``i`` of the category's slice of ``MODEL_NAMES``,
brand ``i % len(brands)``, material ``i % M``, colour ``(i + i // M) % C``, style
``(2 i + 1) % S``, size category ``(i + 1) % 3`` and features ``i % F`` and ``(i + 2) % F``.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["FurnitureCategory", "HomeArea", "HomeStore", "STORES", "MODEL_NAMES", "SIZE_STEPS"]

MODEL_NAMES = (
    "Alba", "Brio", "Corsa", "Dune", "Elio", "Fjord", "Galen", "Halden", "Isla", "Juno", "Kestrel",
    "Linnea", "Marlow", "Nova", "Orla", "Pike", "Quill", "Rowan", "Sable", "Tove", "Umber", "Vale",
    "Wren", "Yara", "Zephyr", "Arden", "Bexley", "Calla", "Delph", "Ember", "Fern", "Greta", "Hollis",
    "Ivo", "Jasper", "Kira", "Lune", "Mira", "Noor", "Oslo",
)
# size category -> (width scale, price factor)
SIZE_STEPS = {
    "compact": (0.9, 0.85), "standard": (1.0, 1.0), "large": (1.1, 1.25),
}


@dataclass(frozen=True)
class FurnitureCategory:
    category: str
    group: str
    noun: str
    box: tuple[float, float, float]  # width, depth, height in metres (standard size)
    price: float  # standard-size price
    n: int
    materials: tuple[str, ...]
    colors: tuple[str, ...]
    styles: tuple[str, ...]
    features: tuple[str, ...]
    brands: tuple[str, ...]


@dataclass(frozen=True)
class HomeArea:
    name: str
    categories: tuple[FurnitureCategory, ...]


@dataclass(frozen=True)
class HomeStore:
    name: str
    slug: str
    theme: str
    areas: tuple[HomeArea, ...]


def _f(category, group, noun, box, price, n, materials, colors, styles, features, brands):
    return FurnitureCategory(category, group, noun, box, price, n, tuple(materials.split(",")),
                             tuple(colors.split(",")), tuple(styles.split(",")),
                             tuple(features.split(",")) if features else (), tuple(brands.split(",")))


def _a(name, *cats):
    return HomeArea(name, tuple(cats))


STORES: tuple[HomeStore, ...] = (
    HomeStore("Atelier Prime", "atelier_prime", "modern living-room furniture", (
        _a("Sofas and Loveseats",
           _f("sofa", "living room furniture", "3-Seat Sofa", (2.0, 0.9, 0.85), 1199.0, 6,
              "velvet,performance fabric,leather,linen blend", "grey,navy,cognac,cream,olive",
              "modern,mid-century,contemporary,minimalist",
              "feature:removable covers,feature:pet-friendly fabric,feature:reversible cushions",
              "Casa Linea,Monarch Loft"),
           _f("loveseat", "living room furniture", "Loveseat", (1.5, 0.85, 0.85), 799.0, 3,
              "velvet,boucle,leather", "blush,charcoal,cream", "modern,mid-century,contemporary",
              "feature:removable covers,feature:pet-friendly fabric", "Casa Linea,Monarch Loft")),
        _a("Accent Seating",
           _f("accent chair", "living room furniture", "Accent Chair", (0.75, 0.8, 0.85), 449.0, 6,
              "boucle,velvet,leather,rattan", "cream,emerald,rust,black,sand", "modern,mid-century,sculptural",
              "feature:swivel,feature:solid wood legs,feature:no assembly", "Casa Linea,Arco Studio"),
           _f("ottoman", "living room furniture", "Ottoman", (0.6, 0.6, 0.45), 189.0, 3,
              "boucle,velvet,leather", "cream,mustard,grey", "modern,contemporary",
              "feature:hidden storage,feature:no assembly", "Arco Studio")),
        _a("Coffee and Side Tables",
           _f("coffee table", "living room furniture", "Coffee Table", (1.2, 0.6, 0.45), 399.0, 5,
              "walnut,marble,tempered glass,oak", "walnut,white,clear,natural", "mid-century,modern,minimalist",
              "feature:hidden storage,feature:rounded corners", "Arco Studio,Monarch Loft"),
           _f("side table", "living room furniture", "Side Table", (0.5, 0.5, 0.55), 149.0, 5,
              "walnut,marble,metal,oak", "walnut,black,white,natural", "mid-century,modern,industrial",
              "feature:rounded corners,feature:shelf", "Arco Studio,Monarch Loft")),
        _a("Media and Rugs",
           _f("tv stand", "living room furniture", "Media Console", (1.6, 0.45, 0.55), 549.0, 4,
              "walnut,oak,lacquered mdf", "walnut,white,black,natural", "mid-century,modern,minimalist",
              "feature:cable management,feature:soft-close doors", "Monarch Loft"),
           _f("area rug", "rugs", "Area Rug 5x8", (1.6, 0.3, 0.3), 249.0, 5,
              "wool,jute,polypropylene", "ivory,blue,terracotta,grey,charcoal", "modern,boho,geometric",
              "feature:washable,feature:low pile,feature:non-shedding", "Loomcraft")),
    )),
    HomeStore("Leather and Ink", "leather_and_ink", "study and office furniture", (
        _a("Desks",
           _f("desk", "office furniture", "Writing Desk", (1.4, 0.7, 0.75), 429.0, 6,
              "oak,walnut,steel and oak,laminate", "natural,walnut,black,white", "industrial,mid-century,modern,traditional",
              "feature:drawers,feature:cable management,feature:keyboard tray", "Quill and Co,Ironbark"),
           _f("standing desk", "office furniture", "Electric Standing Desk", (1.4, 0.7, 0.75), 599.0, 4,
              "bamboo,laminate,walnut veneer", "natural,white,walnut,black", "modern,minimalist",
              "feature:memory presets,feature:cable management,feature:dual motor", "Ironbark")),
        _a("Office Chairs",
           _f("office chair", "office furniture", "Office Chair", (0.65, 0.65, 1.1), 329.0, 9,
              "mesh,leather,fabric", "black,grey,cognac,navy", "modern,traditional,ergonomic",
              "feature:lumbar support,feature:adjustable armrests,feature:headrest,feature:tilt lock",
              "Quill and Co,Posture Works")),
        _a("Bookcases and Filing",
           _f("bookcase", "office furniture", "Bookcase", (0.8, 0.3, 1.8), 279.0, 6,
              "oak,walnut,steel,pine", "natural,walnut,black,white", "industrial,traditional,mid-century",
              "feature:adjustable shelves,feature:glass doors,feature:wall anchor", "Quill and Co,Ironbark"),
           _f("filing cabinet", "office furniture", "Filing Cabinet", (0.4, 0.55, 0.7), 199.0, 4,
              "steel,oak,walnut", "black,white,natural,walnut", "industrial,traditional,modern",
              "feature:lockable,feature:casters", "Ironbark")),
    )),
    HomeStore("Light Logic", "light_logic", "indoor lighting", (
        _a("Floor Lamps",
           _f("floor lamp", "lighting", "Floor Lamp", (0.4, 0.4, 1.6), 179.0, 9,
              "brass,matte steel,wood,rattan", "brass,black,natural,white", "modern,mid-century,scandinavian,industrial",
              "feature:dimmable,feature:foot switch,feature:reading light,feature:smart bulb compatible",
              "Lumen Field,Halo Works")),
        _a("Table and Desk Lamps",
           _f("table lamp", "lighting", "Table Lamp", (0.3, 0.3, 0.55), 89.0, 6,
              "ceramic,brass,glass,linen", "white,brass,amber,sage", "modern,art deco,scandinavian",
              "feature:dimmable,feature:usb port,feature:touch control", "Lumen Field,Halo Works"),
           _f("desk lamp", "lighting", "LED Desk Lamp", (0.2, 0.2, 0.45), 59.0, 4,
              "aluminium,steel,plastic", "black,white,silver", "modern,industrial,minimalist",
              "feature:dimmable,feature:usb port,feature:adjustable arm,feature:warm white",
              "Halo Works")),
        _a("Pendants and Ceiling",
           _f("pendant light", "lighting", "Pendant Light", (0.4, 0.4, 0.3), 139.0, 8,
              "glass,rattan,metal,paper", "smoke,natural,black,white", "modern,boho,industrial,scandinavian",
              "feature:dimmable,feature:adjustable cord,feature:smart bulb compatible", "Lumen Field,Halo Works")),
        _a("Night and Accent Lights",
           _f("night light", "lighting", "Night Light", (0.1, 0.1, 0.15), 24.0, 5,
              "silicone,ceramic,plastic", "white,pink,blue,amber", "playful,minimalist,modern",
              "feature:motion sensor,feature:rechargeable,feature:warm white,feature:timer",
              "Lumen Field,Glowbug"),
           _f("string lights", "lighting", "String Lights", (0.25, 0.2, 0.1), 29.0, 4,
              "copper wire,cotton,plastic", "warm white,multicolor,white", "boho,festive,modern",
              "feature:timer,feature:battery powered,feature:plug-in,feature:waterproof", "Glowbug")),
    )),
    HomeStore("Nordic Nest", "nordic_nest", "Scandinavian-style everyday home furnishings", (
        _a("Bedroom",
           _f("nightstand", "bedroom furniture", "Nightstand", (0.5, 0.4, 0.6), 129.0, 6,
              "birch,oak,pine", "natural,white,grey", "scandinavian,minimalist,japandi",
              "feature:drawer,feature:open shelf,feature:wireless charging", "Fjell Home,Lintu"),
           _f("bed frame", "bedroom furniture", "Queen Bed Frame", (1.6, 2.1, 0.9), 499.0, 3,
              "birch,oak,upholstered linen", "natural,white,grey", "scandinavian,minimalist,japandi",
              "feature:under-bed storage,feature:headboard,feature:no box spring needed", "Fjell Home")),
        _a("Dining",
           _f("dining table", "dining furniture", "Dining Table", (1.6, 0.9, 0.75), 549.0, 4,
              "oak,birch,ash", "natural,white,black", "scandinavian,minimalist,japandi",
              "feature:extendable,feature:seats 6,feature:seats 4", "Fjell Home,Lintu"),
           _f("dining chair", "dining furniture", "Dining Chair", (0.45, 0.5, 0.85), 119.0, 5,
              "oak,birch,molded plastic", "natural,white,grey,black", "scandinavian,minimalist,mid-century",
              "feature:stackable,feature:cushioned seat,feature:set of 2", "Lintu")),
        _a("Storage and Shelving",
           _f("storage basket", "storage", "Storage Basket", (0.4, 0.3, 0.3), 29.0, 5,
              "seagrass,cotton rope,felt,water hyacinth", "natural,white,grey,black", "scandinavian,boho,minimalist",
              "feature:handles,feature:lid,feature:foldable", "Lintu,Fjell Home"),
           _f("shelving unit", "storage", "Shelving Unit", (0.8, 0.35, 1.5), 159.0, 4,
              "birch,pine,powder-coated steel", "natural,white,black", "scandinavian,minimalist,industrial",
              "feature:adjustable shelves,feature:wall anchor,feature:doors", "Fjell Home")),
        _a("Textiles",
           _f("throw blanket", "textiles", "Throw Blanket", (0.4, 0.3, 0.1), 49.0, 5,
              "wool,cotton,faux fur,linen", "oatmeal,grey,sage,rust,cream", "scandinavian,boho,minimalist",
              "feature:machine washable,feature:fringe,feature:weighted", "Lintu"),
           _f("throw pillow", "textiles", "Throw Pillow", (0.45, 0.15, 0.45), 29.0, 5,
              "linen,cotton,velvet,wool", "oatmeal,sage,mustard,navy,cream", "scandinavian,boho,modern",
              "feature:removable cover,feature:down alternative fill", "Lintu,Fjell Home")),
    )),
    HomeStore("Play-cation", "play_cation", "gaming, sports and children's play equipment", (
        _a("Gaming Corner",
           _f("gaming chair", "gaming", "Gaming Chair", (0.7, 0.7, 1.3), 249.0, 5,
              "faux leather,mesh,fabric", "black,red,blue,white", "sporty,modern",
              "feature:lumbar support,feature:recline,feature:footrest,feature:adjustable armrests",
              "Respawn Gear,Pixel Forge"),
           _f("gaming desk", "gaming", "Gaming Desk", (1.2, 0.6, 0.75), 229.0, 4,
              "carbon fibre laminate,steel,laminate", "black,white,grey", "sporty,modern",
              "feature:rgb lighting,feature:cup holder,feature:headphone hook,feature:cable management",
              "Pixel Forge")),
        _a("Sports and Fitness",
           _f("yoga mat", "fitness", "Yoga Mat", (0.15, 0.15, 0.61), 39.0, 4,
              "natural rubber,tpe,cork", "purple,teal,black,natural", "sporty,eco",
              "feature:non-slip,feature:carry strap,feature:extra thick", "Stride Athletic"),
           _f("dumbbell set", "fitness", "Adjustable Dumbbell Set", (0.5, 0.3, 0.2), 149.0, 3,
              "cast iron,rubber-coated steel,neoprene", "black,grey,blue", "sporty",
              "feature:adjustable weight,feature:storage tray", "Stride Athletic"),
           _f("exercise bike", "fitness", "Exercise Bike", (0.5, 1.0, 1.2), 449.0, 3,
              "steel,aluminium", "black,white,grey", "sporty,modern",
              "feature:bluetooth,feature:magnetic resistance,feature:tablet holder", "Stride Athletic")),
        _a("Kids' Play",
           _f("play tent", "kids play", "Play Tent", (1.0, 1.0, 1.2), 69.0, 4,
              "cotton canvas,polyester", "white,pink,grey,green", "playful,boho",
              "feature:foldable,feature:washable,feature:window", "Little Nomad,Treehouse Toys"),
           _f("building set", "kids play", "Building Block Set", (0.4, 0.1, 0.3), 49.0, 4,
              "wood,plastic", "multicolor,natural", "playful,educational",
              "feature:ages 3+,feature:ages 6+,feature:storage bin", "Treehouse Toys"),
           _f("kids table set", "kids play", "Kids Table and Chairs Set", (0.8, 0.8, 0.5), 129.0, 2,
              "pine,plastic", "natural,white", "playful,scandinavian",
              "feature:rounded corners,feature:storage,feature:wipe clean", "Little Nomad")),
    )),
    HomeStore("The Plant", "the_plant", "plants and planters", (
        _a("Indoor Plants",
           _f("potted plant", "plants", "Potted Plant", (0.4, 0.4, 1.0), 49.0, 10,
              "monstera,snake plant,pothos,fiddle leaf fig,zz plant,peace lily", "green,variegated,dark green,silver green", "tropical,modern,boho",
              "care:low light,care:pet-safe,care:low maintenance,care:bright indirect light,care:air purifying",
              "Greenhaus,Verdant Lane")),
        _a("Planters and Pots",
           _f("planter", "planters", "Planter", (0.35, 0.35, 0.35), 39.0, 9,
              "ceramic,terracotta,concrete,woven seagrass", "white,terracotta,grey,natural,black", "modern,rustic,boho,minimalist",
              "feature:drainage hole,feature:saucer included,feature:self-watering", "Greenhaus,Clay and Co")),
        _a("Stands and Care",
           _f("plant stand", "planters", "Plant Stand", (0.4, 0.4, 0.7), 59.0, 5,
              "bamboo,metal,walnut", "natural,black,gold", "mid-century,modern,boho",
              "feature:multi-tier,feature:adjustable width", "Verdant Lane"),
           _f("watering can", "plant care", "Watering Can", (0.45, 0.15, 0.3), 24.0, 4,
              "galvanized steel,brass,plastic", "silver,brass,green,white", "rustic,modern",
              "feature:long spout,feature:1 gallon,feature:indoor size", "Clay and Co")),
    )),
    HomeStore("Victorian Curio Collection", "victorian_curio", "classical furniture and vintage ornaments", (
        _a("Classic Seating",
           _f("wingback armchair", "classic furniture", "Wingback Armchair", (0.85, 0.85, 1.1), 899.0, 5,
              "velvet,leather,damask", "burgundy,forest green,oxblood,gold", "victorian,traditional,baroque",
              "feature:tufted,feature:carved legs,feature:nailhead trim", "Hawthorne and Vale,Ashby Heritage"),
           _f("footstool", "classic furniture", "Footstool", (0.5, 0.4, 0.4), 189.0, 4,
              "velvet,leather,needlepoint", "burgundy,gold,forest green", "victorian,traditional",
              "feature:tufted,feature:carved legs", "Ashby Heritage")),
        _a("Cabinets and Tables",
           _f("curio cabinet", "classic furniture", "Curio Cabinet", (0.9, 0.4, 1.8), 1499.0, 4,
              "mahogany,cherry,walnut", "mahogany,cherry,dark walnut", "victorian,traditional,baroque",
              "feature:glass doors,feature:interior light,feature:lockable", "Hawthorne and Vale"),
           _f("console table", "classic furniture", "Console Table", (1.2, 0.4, 0.8), 699.0, 4,
              "mahogany,marble top,cherry", "mahogany,white marble,cherry", "victorian,baroque,traditional",
              "feature:drawers,feature:carved legs", "Ashby Heritage")),
        _a("Ornaments and Clocks",
           _f("mantel clock", "decor", "Mantel Clock", (0.3, 0.12, 0.25), 149.0, 3,
              "brass,walnut,porcelain", "gold,walnut,white", "victorian,vintage",
              "feature:chime,feature:quartz movement", "Hawthorne and Vale"),
           _f("vase", "decor", "Vase", (0.2, 0.2, 0.35), 79.0, 3,
              "porcelain,cut glass,brass", "blue and white,clear,gold", "victorian,vintage,chinoiserie",
              "feature:hand painted,feature:watertight", "Ashby Heritage"),
           _f("candle holder", "decor", "Candelabra", (0.12, 0.12, 0.3), 59.0, 3,
              "brass,silver plate,pewter", "gold,silver,pewter", "victorian,vintage,baroque",
              "feature:5-arm,feature:3-arm", "Ashby Heritage")),
    )),
)
