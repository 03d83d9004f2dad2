<?xml version="1.0"?>
<!-- SPDX-License-Identifier: MIT -->
<!-- bench/real_programs.sh: the xsltproc workload. A listing of every item
     sorted by price, and items grouped by supplier (Muenchian grouping: the
     groups are small, so the work grows linearly with the document). -->
<xsl:stylesheet version="1.0" xmlns:xsl="http://www.w3.org/1999/XSL/Transform">
<xsl:output method="xml" indent="yes"/>
<xsl:key name="by-supplier" match="item" use="supplier/@ref"/>
<xsl:template match="/catalog">
  <report items="{count(item)}" stock="{sum(item/@stock)}">
    <listing>
      <xsl:for-each select="item">
        <xsl:sort select="price" data-type="number" order="descending"/>
        <xsl:sort select="@id"/>
        <row id="{@id}" kind="{@kind}" tags="{count(tags/tag)}">
          <xsl:value-of select="concat(translate(name, 'abcdefghijklmnopqrstuvwxyz', 'ABCDEFGHIJKLMNOPQRSTUVWXYZ'), ': ', substring(desc, 1, 40))"/>
          <xsl:for-each select="tags/tag"><t><xsl:value-of select="."/></t></xsl:for-each>
        </row>
      </xsl:for-each>
    </listing>
    <suppliers>
      <xsl:for-each select="item[supplier][generate-id() = generate-id(key('by-supplier', supplier/@ref)[1])]">
        <xsl:sort select="supplier/@ref"/>
        <supplier ref="{supplier/@ref}" items="{count(key('by-supplier', supplier/@ref))}"
                  value="{sum(key('by-supplier', supplier/@ref)/price)}"/>
      </xsl:for-each>
    </suppliers>
  </report>
</xsl:template>
</xsl:stylesheet>
